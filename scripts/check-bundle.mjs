// `npm run check:bundle`: builds the Worker as `wrangler deploy` would (--dry-run, nothing is
// uploaded) into a temporary folder and fails when the gzipped upload passes the budget (1 MB;
// Cloudflare refuses Workers over 3 MB gzipped on the free plan and 10 MB on paid ones, and the
// size is startup time on every cold isolate). Prints the measured size either way.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { ROOT } from "./lib/dev-server.mjs";

/** 1 MB; `--budget <bytes>` sets another (the tests use it to see the check fail). */
const { values } = parseArgs({ options: { budget: { type: "string" } } });
const BUDGET_BYTES = values.budget ? Number(values.budget) : 1_000_000;
if (!Number.isInteger(BUDGET_BYTES) || BUDGET_BYTES <= 0) throw new Error(`--budget must be a positive number of bytes: ${values.budget}`);

const out = mkdtempSync(join(tmpdir(), "edge-bundle-"));
try {
  const build = spawnSync(process.execPath, [join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js"), "deploy", "--dry-run", "--outdir", out], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
  });
  if (build.status !== 0) {
    process.stderr.write(build.stdout + build.stderr);
    throw new Error("wrangler deploy --dry-run failed");
  }
  // Every module wrangler would upload (source maps are not part of the upload).
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (!name.endsWith(".map") && name !== "README.md") files.push(path);
    }
  };
  walk(out);
  let raw = 0;
  let gzipped = 0;
  for (const file of files) {
    const bytes = readFileSync(file);
    raw += bytes.length;
    gzipped += gzipSync(bytes, { level: 9 }).length;
  }
  const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
  console.log(`Worker bundle: ${files.map((f) => relative(out, f)).join(", ")}: ${kb(raw)}, gzip ${kb(gzipped)} (budget ${kb(BUDGET_BYTES)})`);
  const reported = /Total Upload: .*/.exec(build.stdout)?.[0];
  if (reported) console.log(`wrangler: ${reported}`);
  if (gzipped > BUDGET_BYTES) {
    console.error(`the gzipped Worker bundle (${kb(gzipped)}) is over the ${kb(BUDGET_BYTES)} budget`);
    process.exitCode = 1;
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
