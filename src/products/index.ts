// The one list of products. Each line re-exports a product's folder (its definition and the
// Durable Object classes wrangler needs exported by the entry module, src/index.ts); the list
// registers them with the platform, in the order the console's navigation, the scope picker, the
// usage page and the reference show them. A new product is a folder, one line in each of the two
// places below and its wrangler.toml entries (docs/ARCHITECTURE.md "Adding a product").
import { registerProducts, type ProductDefinition } from "../platform/products";
import { analytics } from "./analytics";
import { audit } from "./audit";
import { flags } from "./flags";
import { formsProduct } from "./forms";
import { logs } from "./logs";
import { mail } from "./mail";
import { push } from "./push";
import { relay } from "./relay";
import { surveys } from "./surveys";

export * from "./analytics";
export * from "./audit";
export * from "./flags";
export * from "./forms";
export * from "./logs";
export * from "./mail";
export * from "./push";
export * from "./relay";
export * from "./surveys";

/** Every product the Worker serves, registered with the platform. */
export const PRODUCTS: readonly ProductDefinition[] = [logs, relay, surveys, mail, push, audit, formsProduct, analytics, flags];

registerProducts(PRODUCTS);
