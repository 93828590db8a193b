// `npm run build:assets`: the static files the Worker serves (wrangler.toml [assets]) in one
// gitignored folder, dist/assets: the console's browser code (client/*.ts, typed TypeScript
// bundled by esbuild), its stylesheets (the shell's and the product pages'), and the API reference's script (Scalar's standalone.js,
// so /api/v1/docs works offline). `npm start`, `npm test`, `npm run e2e`, `check:bundle` and
// `deploy` run it first.
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { ROOT } from "./lib/dev-server.mjs";

export const ASSETS_DIR = join(ROOT, "dist", "assets");

rmSync(ASSETS_DIR, { recursive: true, force: true });
mkdirSync(join(ASSETS_DIR, "assets"), { recursive: true });
await build({
  entryPoints: [join(ROOT, "client", "console.ts")],
  outdir: join(ASSETS_DIR, "assets"),
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2020",
  sourcemap: false,
  logLevel: "warning",
});
// The analytics tracker at /a/script.js (src/products/analytics/client/tracker.ts): one classic script, under 2 KB.
await build({
  entryPoints: [join(ROOT, "src", "products", "analytics", "client", "tracker.ts")],
  outfile: join(ASSETS_DIR, "a", "script.js"),
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  logLevel: "warning",
});
for (const sheet of ["console.css", "products.css"]) copyFileSync(join(ROOT, "client", sheet), join(ASSETS_DIR, "assets", sheet));
copyFileSync(join(ROOT, "node_modules", "@scalar", "api-reference", "dist", "browser", "standalone.js"), join(ASSETS_DIR, "standalone.js"));
console.log(`built static assets into ${ASSETS_DIR}`);
