// `npm run deploy:setup -- [options]` (USAGE below): logs wrangler in when a person is at the
// terminal, creates the production resources, writes [env.production] into wrangler.toml, applies
// the remote D1 migrations and puts the missing secrets, generated; ADMIN_TOKEN is printed once
// (scripts/lib/deploy-setup.mjs). At a terminal it asks for what was not given; elsewhere (CI,
// piped) it never waits for an answer and refuses to run without what it needs. Idempotent.
import { resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";
import { ROOT } from "./lib/dev-server.mjs";
import { deploySetup, ENV_NAME, SetupError } from "./lib/deploy-setup.mjs";

const USAGE = `Usage: npm run deploy:setup -- [options]

Creates the Cloudflare resources of a production deployment, writes [env.${ENV_NAME}] into
wrangler.toml, applies the D1 migrations remotely and puts the missing secrets. Then: npm run deploy.
At a terminal, whatever is left out is asked for; elsewhere the run stops until it is given.
After the first run, every value is read back from wrangler.toml and may be left out.

Options:
  --app-url <https url>        public address of the API (APP_URL), e.g. https://api.acme.com
  --mail-from <address>        sending address of the platform's own mail (MAIL_FROM), on a
                               domain you own, e.g. "Acme <no-reply@mail.acme.com>"
  --sandbox-domain <domain>    domain sandbox keys send from (SANDBOX_DOMAIN), one you own,
                               e.g. sandbox.acme.com
  --mail-url <https url>       your mail provider's JSON HTTP API; without one no mail leaves
  --config <path>              the wrangler config (default: wrangler.toml of this repository)
  --dry-run                    print every wrangler command and the section, run and write nothing
  -h, --help                   this text

Environment: MAIL_FROM and SANDBOX_DOMAIN (when the options are not given), MAIL_HTTP_TOKEN
(your provider's token), CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID (CI, no login).
More: docs/DEPLOY.md`;

let values;
try {
  ({ values } = parseArgs({
    options: {
      "app-url": { type: "string" },
      "mail-url": { type: "string" },
      "mail-from": { type: "string" },
      "sandbox-domain": { type: "string" },
      "dry-run": { type: "boolean", default: false },
      config: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (error) {
  // An unknown option or a missing value: the reason and the usage, not a stack trace.
  console.error(`deploy:setup: ${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

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
    mailFrom: values["mail-from"] ?? (process.env.MAIL_FROM || undefined),
    sandboxDomain: values["sandbox-domain"] ?? (process.env.SANDBOX_DOMAIN || undefined),
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
