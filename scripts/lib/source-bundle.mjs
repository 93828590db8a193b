// Imports the Worker's TypeScript source into Node: bundles a small module with the esbuild that
// wrangler itself uses (same resolution conditions as a Worker build) and imports the bundle.
// `cloudflare:workers` is replaced by empty base classes (the Durable Object classes reach the
// bundle through the product list, and are never instantiated here), and `.sql` files are text, as
// wrangler's Text rule bundles them.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

const cloudflareStub = {
  name: "cloudflare-stub",
  setup(build) {
    build.onResolve({ filter: /^cloudflare:workers$/ }, () => ({ path: "cloudflare:workers", namespace: "cloudflare-stub" }));
    build.onLoad({ filter: /.*/, namespace: "cloudflare-stub" }, () => ({
      contents:
        "export class DurableObject { constructor(ctx, env) { this.ctx = ctx; this.env = env; } } export class WorkerEntrypoint {} export const env = {};",
      loader: "js",
    }));
  },
};

/** Bundles `contents` (an ES module whose imports are relative to the repository's root) and imports it. */
export async function importSource(contents) {
  const requireFromWrangler = createRequire(createRequire(import.meta.url).resolve("wrangler/package.json"));
  const { build } = requireFromWrangler("esbuild");
  const result = await build({
    stdin: { contents, resolveDir: ROOT, loader: "ts", sourcefile: "source-bundle.ts" },
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
    plugins: [cloudflareStub],
    loader: { ".sql": "text" },
    external: ["cloudflare:*"],
    conditions: ["workerd", "worker", "browser"],
    logLevel: "warning",
  });
  return import(`data:text/javascript;base64,${Buffer.from(result.outputFiles[0].text).toString("base64")}`);
}
