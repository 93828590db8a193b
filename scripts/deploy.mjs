// `npm run deploy [-- --config wrangler.toml]`: deploys the production Worker (`wrangler deploy
// --env production`) once `npm run deploy:setup` has written its [env.production] section; without
// it, it stops instead of deploying the top-level config, whose D1 id is a local placeholder. It
// builds the static assets (the console's browser code, the reference script) first.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ROOT } from "./lib/dev-server.mjs";
import { ENV_NAME, hasProductionSection, runWrangler } from "./lib/deploy-setup.mjs";

const { values, tokens } = parseArgs({ options: { config: { type: "string" } }, strict: false, tokens: true });
const configPath = resolve(typeof values.config === "string" ? values.config : `${ROOT}/wrangler.toml`);
if (!hasProductionSection(readFileSync(configPath, "utf8"))) {
  console.error(
    `deploy: ${configPath} has no [env.${ENV_NAME}] yet: run \`npm run deploy:setup\` first (\`npm run deploy:setup -- --help\` lists its options)`,
  );
  process.exit(1);
}
// The console's browser code and the reference script are static assets built from the tree.
const built = spawnSync(process.execPath, [`${ROOT}/scripts/build-assets.mjs`], { stdio: "inherit" });
if (built.status !== 0) process.exit(built.status ?? 1);
// Everything else on the command line goes to wrangler as given (--dry-run, --outdir, ...).
const extra = tokens
  .filter((t) => t.kind !== "option-terminator" && !(t.kind === "option" && t.name === "config"))
  .map((t) => (t.kind === "option" ? t.rawName + (t.inlineValue ? `=${t.value}` : "") : t.value));
const result = runWrangler(["deploy", "--env", ENV_NAME, "--config", configPath, ...extra], { terminal: true });
process.exit(result.status);
