// End-to-end smoke run over real HTTP: starts `wrangler dev` on a free port with its own local
// state and secrets, drives the operator API and each product, and stops the server whatever
// happens. Prints one line per check and closes with "N passed, N failed". Product suites drive
// the real queues, cron and R2 of wrangler dev and receive webhooks and pushes on local receivers
// (scripts/e2e/receiver.mjs); the push receiver is https, which needs the openssl CLI.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyMigrations, createTeamWithKey, freePort, freshSecrets, startDevServer, writeVars } from "./lib/dev-server.mjs";
import { analyticsChecks } from "./e2e/analytics.mjs";
import { auditChecks } from "./e2e/audit.mjs";
import { consoleChecks } from "./e2e/console.mjs";
import { consoleExploreChecks } from "./e2e/console-explore.mjs";
import { consoleFlagsChecks } from "./e2e/console-flags.mjs";
import { consoleProductsChecks } from "./e2e/console-products.mjs";
import { consoleWorkChecks } from "./e2e/console-work.mjs";
import { logsChecks } from "./e2e/logs.mjs";
import { mailChecks } from "./e2e/mail.mjs";
import { platformChecks } from "./e2e/platform.mjs";
import { pushChecks } from "./e2e/push.mjs";
import { startDohResolver } from "./e2e/dns.mjs";
import { createTlsMaterial } from "./e2e/receiver.mjs";
import { referencePageChecks } from "./e2e/reference-page.mjs";
import { relayChecks } from "./e2e/relay.mjs";
import { surveyPageChecks } from "./e2e/survey-page.mjs";
import { surveysChecks } from "./e2e/surveys.mjs";
import { typedClientChecks } from "./e2e/typed-client.mjs";
import { formsChecks } from "./e2e/forms.mjs";
import { flagsChecks } from "./e2e/flags.mjs";
import { buildTypedClient } from "./lib/typed-client.mjs";

/** The client package's checks, once the live document is the committed one and they compile against it. */
async function clientPackageChecks(ctx) {
  await buildTypedClient(ctx.url);
  // buildTypedClient runs tsc synchronously (a minute under load), blocking this process while
  // the server closes the idle keep-alive connection of the document's fetch; the next request
  // would go out on that dead socket ("fetch failed") before the close is read. One turn of the
  // event loop reads it.
  await new Promise((resolve) => setTimeout(resolve, 50));
  return typedClientChecks(ctx);
}

const allSuites = [
  platformChecks,
  referencePageChecks,
  clientPackageChecks,
  surveysChecks,
  surveyPageChecks,
  consoleChecks,
  consoleExploreChecks,
  consoleProductsChecks,
  consoleWorkChecks,
  consoleFlagsChecks,
  logsChecks,
  auditChecks,
  relayChecks,
  pushChecks,
  mailChecks,
  formsChecks,
  analyticsChecks,
  flagsChecks,
];
// E2E_SUITES=consoleChecks,mailChecks runs only those suites, by function name or by its short
// name (the function name without "Checks", kebab-case: console-flags for consoleFlagsChecks).
const only = process.env.E2E_SUITES?.split(",").map((name) => name.trim());
const shortName = (name) => name.replace(/Checks$/, "").replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const suites = only ? allSuites.filter((suite) => only.includes(suite.name) || only.includes(shortName(suite.name))) : allSuites;

const dir = mkdtempSync(join(tmpdir(), "edge-e2e-"));
const envFile = join(dir, "dev.vars");
const secrets = freshSecrets();
writeVars(envFile, secrets);
let server;
let passed = 0;
let failed = 0;
// Suites register clean-ups (local receivers) with ctx.defer(fn); they run whatever happens.
const cleanups = [];
// Push endpoints must be https: a throw-away CA that wrangler dev trusts (miniflare reads
// NODE_EXTRA_CA_CERTS when it starts) and a certificate for 127.0.0.1 for the local receiver.
const tls = createTlsMaterial(dir);
if (tls) process.env.NODE_EXTRA_CA_CERTS = tls.caFile;

try {
  applyMigrations({ persistTo: join(dir, "state") });
  const port = await freePort();
  // Sending domains are verified against a local DNS-over-HTTPS resolver, never the internet.
  const dns = await startDohResolver();
  cleanups.push(() => dns.close());
  server = await startDevServer({ port, persistTo: join(dir, "state"), envFile, testScheduled: true, vars: { DNS_RESOLVER_URL: dns.url } });
  const ctx = {
    url: server.url,
    dns,
    adminToken: secrets.ADMIN_TOKEN,
    // What wrangler dev printed (the Worker's log): the console's links with the outbox transport.
    output: () => server.output(),
    createTeamWithKey: (opts) => createTeamWithKey(server.url, secrets.ADMIN_TOKEN, opts),
    tls,
    defer: (fn) => cleanups.push(fn),
  };
  for (const suite of suites) {
    let checks;
    try {
      checks = await suite(ctx);
    } catch (error) {
      failed++;
      console.log(`FAIL ${suite.name} set-up: ${error?.stack ?? error}`);
      continue;
    }
    for (const [name, check] of Object.entries(checks)) {
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
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.log(`warning: clean-up failed: ${error?.message ?? error}`);
    }
  }
  server?.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
