// `npm run deploy:setup -- [--app-url https://api.example.com] [--mail-url https://mail.provider/send]
// [--dry-run] [--config wrangler.toml]`: logs wrangler in when a person is at the terminal, creates
// the production resources, writes [env.production] into wrangler.toml, applies the remote D1
// migrations and puts the missing secrets, generated; ADMIN_TOKEN is printed once
// (scripts/lib/deploy-setup.mjs). At a terminal it asks for what was not given; elsewhere (CI,
// piped) it never waits for an answer. `--dry-run` prints every command instead of running it.
// MAIL_HTTP_TOKEN may come from the environment. Idempotent.
import { resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";
import { ROOT } from "./lib/dev-server.mjs";
import { deploySetup, ENV_NAME, SetupError } from "./lib/deploy-setup.mjs";

const { values } = parseArgs({
  options: {
    "app-url": { type: "string" },
    "mail-url": { type: "string" },
    "dry-run": { type: "boolean", default: false },
    config: { type: "string" },
  },
});

// A person at a terminal is asked, and gets wrangler's login; CI (or a pipe) never waits.
const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY) && !process.env.CI;
const readline = interactive ? createInterface({ input: process.stdin, output: process.stdout }) : null;
const ask = readline ? (question) => readline.question(question) : null;

try {
  const configPath = resolve(values.config ?? `${ROOT}/wrangler.toml`);
  const result = await deploySetup({
    configPath,
    appUrl: values["app-url"],
    mailUrl: values["mail-url"],
    mailToken: process.env.MAIL_HTTP_TOKEN,
    dryRun: values["dry-run"],
    ask,
  });
  if (values["dry-run"]) {
    console.log(`\nDry run: nothing was created, written or put. ${result.planned.length} wrangler commands above, then \`npm run deploy\`.`);
  } else {
    console.log(`\nResources are ready and the ${ENV_NAME} environment is configured (APP_URL ${result.appUrl}).`);
    if (result.adminToken) {
      console.log(`\nADMIN_TOKEN (the operator API's credential; shown this once, it cannot be read back):\n\n  ${result.adminToken}\n`);
    }
    console.log("Deploy with: npm run deploy");
  }
} catch (error) {
  console.error(error instanceof SetupError ? `deploy:setup: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  readline?.close();
}
