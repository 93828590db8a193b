// Builds the package into dist/: one ES module per entry (server, web) bundled by esbuild, with the
// platform's evaluator (src/products/flags/evaluate.ts and its sha1.ts) compiled in from the
// repository's own source, so the provider runs the Worker's evaluation code and never a copy; the
// OpenFeature SDKs stay imports (peer dependencies). Declarations come from the root's TypeScript
// and may name only OpenFeature's packages (none of the repository's files travel with them).
// `node build.mjs` (also `prepack`), or buildPackage() from the tests and the e2e run.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

export const PACKAGE_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(PACKAGE_DIR, "..", "..");
export const DIST = join(PACKAGE_DIR, "dist");
const ENTRIES = ["server", "web"];

/** The bundles; returns esbuild's metafile (which source files went into which output). */
export async function bundle() {
  const result = await build({
    entryPoints: ENTRIES.map((name) => join(PACKAGE_DIR, "src", `${name}.ts`)),
    outdir: DIST,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    external: ["@openfeature/*"],
    metafile: true,
    legalComments: "none",
    logLevel: "warning",
    banner: { js: "// @edge-platform/openfeature, built from clients/openfeature/src and the platform's src/products/flags/evaluate.ts." },
  });
  return result.metafile;
}

/** The declarations of the entries (dist/<entry>.d.ts); throws when one imports anything but an OpenFeature package. */
export function declarations() {
  const out = mkdtempSync(join(tmpdir(), "openfeature-dts-"));
  try {
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const args = [
      tsc,
      "-p",
      join(PACKAGE_DIR, "tsconfig.json"),
      "--noEmit",
      "false",
      "--declaration",
      "--emitDeclarationOnly",
      "--rootDir",
      ROOT,
      "--outDir",
      out,
    ];
    const run = spawnSync(process.execPath, args, { encoding: "utf8", cwd: ROOT });
    if (run.status !== 0) throw new Error(`tsc failed:\n${run.stdout}${run.stderr}`);
    mkdirSync(DIST, { recursive: true });
    for (const name of ENTRIES) {
      const file = join(out, relative(ROOT, PACKAGE_DIR), "src", `${name}.d.ts`);
      const text = readFileSync(file, "utf8");
      const imports = [...text.matchAll(/from\s+["']([^"']+)["']|import\(["']([^"']+)["']\)/g)].map((m) => m[1] ?? m[2]);
      const foreign = imports.filter((spec) => !spec.startsWith("@openfeature/"));
      if (foreign.length > 0)
        throw new Error(`dist/${name}.d.ts would import ${foreign.join(", ")}: keep the public types to OpenFeature's and the package's own`);
      copyFileSync(file, join(DIST, `${name}.d.ts`));
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The whole build; returns the bundles' metafile. */
export async function buildPackage({ types = true } = {}) {
  rmSync(DIST, { recursive: true, force: true });
  const metafile = await bundle();
  if (types) declarations();
  return metafile;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await buildPackage();
  // stderr: `npm pack --json` prints the prepack script's stdout into its JSON.
  console.error(`built ${relative(process.cwd(), DIST) || "dist"}: ${ENTRIES.map((e) => `${e}.js, ${e}.d.ts`).join(", ")}`);
}
