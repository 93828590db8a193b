import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// Tests run inside workerd with the real bindings of wrangler.toml (D1, Durable Objects, R2,
// Queues); secrets get fixed test values and outbound calls may reach loopback.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
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
      testTimeout: 30_000,
    },
  };
});
