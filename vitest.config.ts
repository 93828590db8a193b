import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { unstable_readConfig } from "wrangler";

// Tests run inside workerd with the real bindings of wrangler.toml (D1, Durable Objects, R2,
// Queues); secrets get fixed test values and outbound calls may reach loopback.
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
      // Each test file keeps its own runner (vitest's default, isolate: true), so its own storage
      // and a fresh load of the app's modules (~2 s a file, vitest's "setup" time). Sharing one
      // runner (isolate: false) with reset() and the migrations before each file was measured
      // (issue 13): the load goes, but every reset() makes the files after it slower (the same
      // file took 0.7 s, then 1.8 s after six resets; no growth without reset()), and without
      // reset() files would see each other's data and rate-limit buckets.
      testTimeout: 30_000,
      // Read by test/hardening/budget.ts: how many requests the fuzz sends (full in CI).
      provide: {
        ci: Boolean(process.env.CI) && process.env.CI !== "false",
        hardeningFuzzRequests: process.env.HARDENING_FUZZ_REQUESTS ?? null,
      },
    },
  };
});
