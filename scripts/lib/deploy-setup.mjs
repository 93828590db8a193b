// Going live on a Cloudflare account (`npm run deploy:setup`, scripts/deploy-setup.mjs): creates the
// D1 database, the R2 bucket and every queue named in wrangler.toml with wrangler, writes their
// ids into an `[env.production]` section of wrangler.toml (wrangler does not inherit bindings or
// vars into an environment, so each is repeated there), applies the D1 migrations remotely and
// lists the secrets to put. Safe to run again: existing resources are found, not duplicated, and
// the generated section is replaced in place.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ROOT } from "./dev-server.mjs";

export const ENV_NAME = "production";
export const BLOCK_START = "# >>> deploy:setup";
export const BLOCK_END = "# <<< deploy:setup";

/** Secrets the Worker reads in production, with how to make a value (README "Deploy"). */
export const SECRETS = [
  { name: "ADMIN_TOKEN", make: "openssl rand -base64 32", why: "bearer token of the operator API" },
  { name: "ENCRYPTION_KEY", make: "openssl rand -base64 32", why: "AES-256-GCM key (base64 of 32 bytes) for secrets at rest" },
  { name: "SIGNING_KEY", make: "openssl rand -base64 32", why: "HMAC key for share tokens and download links" },
];
/** Only needed with MAIL_TRANSPORT=http. */
export const MAIL_SECRET = { name: "MAIL_HTTP_TOKEN", make: "your mail provider's API token", why: "token of the JSON HTTP mail provider" };

/** wrangler's own reading of a config file (the top level, as written). */
export function readConfig(configPath) {
  const require = createRequire(join(ROOT, "package.json"));
  return require("wrangler").experimental_readRawConfig({ config: configPath }).rawConfig;
}

/**
 * Runs wrangler with `args`; returns { status, output } (stdout and stderr together, as a person
 * would read them). WRANGLER_BIN names another executable (the tests' fake); by default the
 * project's wrangler under the running Node.
 */
export function runWrangler(args, { cwd = ROOT, env = process.env } = {}) {
  const bin = env.WRANGLER_BIN;
  const [command, argv] = bin ? [bin, args] : [process.execPath, [join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js"), ...args]];
  const result = spawnSync(command, argv, { cwd, env: { ...env, CI: "true", WRANGLER_SEND_METRICS: "false" }, encoding: "utf8" });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, output: `${result.stdout ?? ""}${result.stderr ?? ""}` };
}

/** "already exists" as wrangler prints it for D1 and R2 (and "already taken" for a queue name). */
export function alreadyExists(output) {
  return /already (exists|taken)|already_exists/i.test(output);
}

class SetupError extends Error {}

function failed(what, result) {
  return new SetupError(`${what} failed (wrangler exited ${result.status}):\n${result.output.trim()}`);
}

/** Every queue the config names: producers, consumers and their dead-letter queues, in order. */
export function queueNames(config) {
  const names = [
    ...(config.queues?.producers ?? []).map((p) => p.queue),
    ...(config.queues?.consumers ?? []).flatMap((c) => [c.queue, c.dead_letter_queue]),
  ].filter(Boolean);
  return [...new Set(names)];
}

/** The D1 database's id: from `d1 list --json`, creating the database when it is missing. */
function ensureDatabase(name, wrangler, log) {
  const find = () => {
    const list = wrangler(["d1", "list", "--json"]);
    if (list.status !== 0) throw failed("wrangler d1 list", list);
    const start = list.output.indexOf("[");
    let dbs;
    try {
      dbs = JSON.parse(list.output.slice(start, list.output.lastIndexOf("]") + 1));
    } catch {
      throw new SetupError(`wrangler d1 list --json printed no JSON list:\n${list.output.trim()}`);
    }
    return dbs.find((db) => db.name === name)?.uuid ?? null;
  };
  const existing = find();
  if (existing) {
    log(`D1 database ${name}: exists (${existing})`);
    return existing;
  }
  const created = wrangler(["d1", "create", name]);
  if (created.status !== 0 && !alreadyExists(created.output)) throw failed(`wrangler d1 create ${name}`, created);
  // The id is in the config snippet wrangler prints; listing again also covers a concurrent create.
  const id = /database_id\s*=\s*"([0-9a-f-]{36})"/i.exec(created.output)?.[1] ?? find();
  if (!id) throw new SetupError(`D1 database ${name} was created but its id could not be read:\n${created.output.trim()}`);
  log(`D1 database ${name}: created (${id})`);
  return id;
}

function ensureNamed(kind, args, wrangler, log) {
  const result = wrangler(args);
  if (result.status === 0) return log(`${kind}: created`);
  if (alreadyExists(result.output)) return log(`${kind}: exists`);
  throw failed(`wrangler ${args.join(" ")}`, result);
}

const tomlValue = (value) => {
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  throw new SetupError(`cannot write ${JSON.stringify(value)} to TOML`);
};
const tomlTable = (header, object) => [header, ...Object.entries(object).filter(([, v]) => v !== undefined).map(([k, v]) => `${k} = ${tomlValue(v)}`), ""];

/** The APP_URL of an earlier run, read back from its generated section. */
export function previousAppUrl(text) {
  const block = generatedBlock(text);
  return block ? /^APP_URL\s*=\s*"([^"]*)"/m.exec(block)?.[1] ?? null : null;
}

function generatedBlock(text) {
  const start = text.indexOf(BLOCK_START);
  const end = text.indexOf(BLOCK_END);
  return start >= 0 && end > start ? text.slice(start, end + BLOCK_END.length) : null;
}

/**
 * The `[env.production]` section for `config` (top level as read by wrangler) with the created
 * resources' ids. Vars are copied with APP_URL replaced; ALLOW_PRIVATE_TARGETS is forced "false".
 */
export function productionSection(config, { databaseId, appUrl }) {
  const env = `env.${ENV_NAME}`;
  const lines = [
    BLOCK_START,
    "# Written by `npm run deploy:setup` (scripts/deploy-setup.mjs) from the top-level config above:",
    "# wrangler does not inherit vars or bindings into an environment, so they are repeated here.",
    "# Edit the top level, then run the set-up again; changes inside this block are overwritten.",
    `[${env}]`,
    "",
    ...tomlTable(`[${env}.vars]`, { ...config.vars, APP_URL: appUrl, ALLOW_PRIVATE_TARGETS: "false" }),
  ];
  for (const db of config.d1_databases ?? []) lines.push(...tomlTable(`[[${env}.d1_databases]]`, { ...db, database_id: databaseId }));
  for (const binding of config.durable_objects?.bindings ?? []) lines.push(...tomlTable(`[[${env}.durable_objects.bindings]]`, binding));
  for (const bucket of config.r2_buckets ?? []) lines.push(...tomlTable(`[[${env}.r2_buckets]]`, bucket));
  for (const producer of config.queues?.producers ?? []) lines.push(...tomlTable(`[[${env}.queues.producers]]`, producer));
  for (const consumer of config.queues?.consumers ?? []) lines.push(...tomlTable(`[[${env}.queues.consumers]]`, consumer));
  lines.push(BLOCK_END);
  return `${lines.join("\n")}\n`;
}

/** `text` with its generated section replaced by `section` (or `section` appended). */
export function withSection(text, section) {
  const block = generatedBlock(text);
  if (block) return text.replace(block, section.trimEnd());
  if (/^\[env\.production[\].]/m.test(text)) {
    throw new SetupError("wrangler.toml has an [env.production] section that deploy:setup did not write: remove it or move it into the generated block");
  }
  return `${text.trimEnd()}\n\n${section}`;
}

/**
 * The whole set-up. Options: configPath, appUrl (else the one of an earlier run), wrangler (the
 * runner, for tests), log. Returns { databaseId, appUrl, queues, secrets }.
 */
export function deploySetup({ configPath = join(ROOT, "wrangler.toml"), appUrl, wrangler = runWrangler, log = console.log } = {}) {
  const text = readFileSync(configPath, "utf8");
  appUrl ??= previousAppUrl(text);
  if (!appUrl) throw new SetupError("APP_URL is required on the first run: npm run deploy:setup -- --app-url https://api.example.com");
  let parsed;
  try {
    parsed = new URL(appUrl);
  } catch {
    throw new SetupError(`APP_URL is not a URL: ${appUrl}`);
  }
  if (parsed.protocol !== "https:") throw new SetupError(`APP_URL must be https in production: ${appUrl}`);
  appUrl = parsed.origin;

  const config = readConfig(configPath);
  const db = config.d1_databases?.[0];
  if (!db?.database_name) throw new SetupError("wrangler.toml declares no D1 database");
  const databaseId = ensureDatabase(db.database_name, wrangler, log);
  for (const bucket of config.r2_buckets ?? []) ensureNamed(`R2 bucket ${bucket.bucket_name}`, ["r2", "bucket", "create", bucket.bucket_name], wrangler, log);
  const queues = queueNames(config);
  for (const queue of queues) ensureNamed(`queue ${queue}`, ["queues", "create", queue], wrangler, log);

  writeFileSync(configPath, withSection(text, productionSection(config, { databaseId, appUrl })));
  log(`wrote [env.${ENV_NAME}] to ${configPath}`);

  const migrate = wrangler(["d1", "migrations", "apply", db.binding, "--remote", "--env", ENV_NAME, "--config", configPath]);
  if (migrate.status !== 0) throw failed("wrangler d1 migrations apply --remote", migrate);
  log(`D1 migrations applied to ${db.database_name} (remote)`);

  const secrets = config.vars?.MAIL_TRANSPORT === "http" ? [...SECRETS, MAIL_SECRET] : SECRETS;
  return { databaseId, appUrl, queues, secrets };
}

export { SetupError };
