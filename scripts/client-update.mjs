// `npm run client:update`: writes the app's OpenAPI document (built in process, no server) to
// clients/typescript/openapi.json and regenerates clients/typescript/schema.d.ts from it. Run it
// after changing a route or schema; `npm run test:scripts` fails while either is stale.
import { COMMITTED_DOCUMENT, COMMITTED_TYPES, updateClient } from "./lib/typed-client.mjs";

await updateClient();
console.log(`wrote ${COMMITTED_DOCUMENT} and ${COMMITTED_TYPES}`);
