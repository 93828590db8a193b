import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import { unstable_readConfig } from "wrangler";

// Tests run inside workerd with the real bindings of wrangler.toml (D1, Durable Objects, R2,
// Queues); secrets get fixed test values and outbound calls may reach loopback.
// Every package (and package subpath) the app's source imports, for vitest to pre-bundle.
function packagesImportedBy(dir: string): string[] {
  const found = new Set<string>();
  for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    if (!/\.tsx?$/.test(entry)) continue;
    for (const m of readFileSync(join(dir, entry), "utf8").matchAll(/^(?:import|export|\})[^\n]*? from "([^".][^"]*)"/gm)) {
      if (!/^(cloudflare|node):/.test(m[1])) found.add(m[1]);
    }
  }
  // tsconfig's jsxImportSource: the runtime the compiled .tsx files import.
  found.add("hono/jsx/jsx-runtime");
  return [...found].sort();
}

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  // The queues, crons and Durable Object classes wrangler.toml declares, for the tests that hold
  // src/index.ts's dispatch tables and the products' definitions against them.
  const wrangler = unstable_readConfig({ config: "./wrangler.toml" });
  const jobs = {
    consumers: (wrangler.queues.consumers ?? []).map((c: { queue: string; max_retries?: number; dead_letter_queue?: string; max_batch_size?: number }) => ({
      queue: c.queue,
      max_retries: c.max_retries ?? null,
      dead_letter_queue: c.dead_letter_queue ?? null,
      // The batch size the played queues of test/helpers/queues.ts deliver in, as the runtime does.
      max_batch_size: c.max_batch_size ?? null,
    })),
    producers: (wrangler.queues.producers ?? []).map((p: { binding: string; queue: string }) => ({ binding: p.binding, queue: p.queue })),
    crons: wrangler.triggers.crons ?? [],
    // The Durable Object classes its bindings name, for the test that holds the products' definitions against them.
    classes: (wrangler.durable_objects.bindings ?? []).map((b: { class_name: string }) => b.class_name),
  };
  return {
    plugins: [
      // The log store's migrations import SQL files as text, as wrangler's Text rule bundles them.
      {
        name: "sql-as-text",
        transform(code: string, id: string) {
          return id.endsWith(".sql") ? { code: `export default ${JSON.stringify(code)};`, map: null } : undefined;
        },
      },
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            TEST_WRANGLER_JOBS: jobs,
            ADMIN_TOKEN: "test-admin-token",
            ENCRYPTION_KEY: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
            SIGNING_KEY: "test-signing-key-0123456789abcdef",
            ALLOW_PRIVATE_TARGETS: "true",
            APP_URL: "http://app.test",
            // Never the internet: domain verification in the tests intercepts fetch or fails here.
            DNS_RESOLVER_URL: "http://127.0.0.1:9/dns-query",
          },
        },
      }),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      setupFiles: ["./test/setup.ts"],
      // One runner per core (vitest's default leaves one core idle: on CI's two cores that is one
      // runner, and most of a runner's time is spent waiting on workerd, not on its own core).
      maxWorkers: Math.max(2, availableParallelism()),
      // The dependencies pre-bundled once, so each file's fresh load of the app fetches a few
      // bundles instead of hundreds of small modules of hono, zod and drizzle (setup 3.3 → 2.5 s a file).
      deps: { optimizer: { ssr: { enabled: true, include: packagesImportedBy("src") } } },
      testTimeout: 30_000,
      // Read by test/hardening/budget.ts: how many requests the fuzz sends (full in CI).
      provide: {
        ci: Boolean(process.env.CI) && process.env.CI !== "false",
        hardeningFuzzRequests: process.env.HARDENING_FUZZ_REQUESTS ?? null,
      },
    },
  };
});
