// `npm run deploy:setup -- --app-url https://api.example.com [--config wrangler.toml]`: creates the
// production resources, writes [env.production] into wrangler.toml, applies the remote D1
// migrations and prints the secrets to put (scripts/lib/deploy-setup.mjs). Needs a logged-in
// wrangler (`wrangler login`, or CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID). Idempotent.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ROOT } from "./lib/dev-server.mjs";
import { deploySetup, ENV_NAME, SetupError } from "./lib/deploy-setup.mjs";

const { values } = parseArgs({
  options: { "app-url": { type: "string" }, config: { type: "string" } },
});

try {
  const configPath = resolve(values.config ?? `${ROOT}/wrangler.toml`);
  const result = deploySetup({ configPath, appUrl: values["app-url"] });
  console.log(`
Resources are ready and the ${ENV_NAME} environment is configured (APP_URL ${result.appUrl}).
Put each secret once (a value per line is read from stdin), then deploy:
${result.secrets.map((s) => `  ${s.make.startsWith("openssl") ? `${s.make} | ` : ""}npx wrangler secret put ${s.name} --env ${ENV_NAME}   # ${s.why}${s.make.startsWith("openssl") ? "" : ` (${s.make})`}`).join("\n")}
  npx wrangler deploy --env ${ENV_NAME}
Keep ADMIN_TOKEN somewhere safe: it is the operator API's credential and cannot be read back.`);
} catch (error) {
  console.error(error instanceof SetupError ? `deploy:setup: ${error.message}` : error);
  process.exit(1);
}
