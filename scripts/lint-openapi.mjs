// `npm run lint:openapi`: writes the OpenAPI document to .wrangler/openapi/openapi.json (built in
// process, see scripts/lib/openapi-document.mjs) and lints it with Redocly's recommended rules
// plus redocly.yaml. Exits non-zero on any error; warnings are printed but pass.
// `--out <file>` writes the document elsewhere; `--no-lint` only writes it.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ROOT } from "./lib/dev-server.mjs";
import { buildOpenApiDocument } from "./lib/openapi-document.mjs";

const args = process.argv.slice(2);
const outIndex = args.indexOf("--out");
const out = outIndex >= 0 ? resolve(args[outIndex + 1]) : join(ROOT, ".wrangler", "openapi", "openapi.json");

const doc = await buildOpenApiDocument();
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
console.log(`wrote ${out}`);
if (args.includes("--no-lint")) process.exit(0);

const redocly = join(ROOT, "node_modules", "@redocly", "cli", "bin", "cli.js");
const lint = spawnSync(process.execPath, [redocly, "lint", out, "--config", join(ROOT, "redocly.yaml"), "--format", "stylish"], {
  cwd: ROOT,
  stdio: "inherit",
  env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
});
process.exit(lint.status ?? 1);
