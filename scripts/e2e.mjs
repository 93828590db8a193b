// End-to-end smoke run over real HTTP: starts `wrangler dev` on a free port with its own local
// state and secrets, drives the operator API and each product, and stops the server whatever
// happens. Prints one line per check and closes with "N passed, N failed".
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyMigrations, createTeamWithKey, freePort, freshSecrets, startDevServer, writeVars } from "./lib/dev-server.mjs";
import { platformChecks } from "./e2e/platform.mjs";
import { surveyPageChecks } from "./e2e/survey-page.mjs";

const suites = [platformChecks, surveyPageChecks];

const dir = mkdtempSync(join(tmpdir(), "edge-e2e-"));
const envFile = join(dir, "dev.vars");
const secrets = freshSecrets();
writeVars(envFile, secrets);
let server;
let passed = 0;
let failed = 0;

try {
  applyMigrations({ persistTo: join(dir, "state") });
  const port = await freePort();
  server = await startDevServer({ port, persistTo: join(dir, "state"), envFile, testScheduled: true });
  const ctx = { url: server.url, adminToken: secrets.ADMIN_TOKEN, createTeamWithKey: (opts) => createTeamWithKey(server.url, secrets.ADMIN_TOKEN, opts) };
  for (const suite of suites) {
    for (const [name, check] of Object.entries(await suite(ctx))) {
      const started = Date.now();
      try {
        await check();
        passed++;
        console.log(`ok   ${name} (${Date.now() - started} ms)`);
      } catch (error) {
        failed++;
        console.log(`FAIL ${name}: ${error?.stack ?? error}`);
      }
    }
  }
} catch (error) {
  failed++;
  console.log(`FAIL e2e set-up: ${error?.stack ?? error}`);
  if (server) console.log(server.output());
} finally {
  server?.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
