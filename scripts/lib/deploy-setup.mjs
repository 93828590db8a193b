// Going live on a Cloudflare account (`npm run deploy:setup`, scripts/deploy-setup.mjs): makes sure
// wrangler is logged in (a person at a terminal gets wrangler's login), creates the D1 database,
// the R2 bucket and every queue named in wrangler.toml, writes their ids into an `[env.production]`
// section of wrangler.toml (wrangler does not inherit bindings or vars into an environment, so each
// is repeated there), with the mail provider (or MAIL_TRANSPORT "off", said loudly: the outbox
// never runs in production) and the operator's own sending address (MAIL_FROM) and sandbox domain
// (SANDBOX_DOMAIN), asked for or refused until given, never the local defaults; applies the D1 migrations remotely and puts the secrets that are
// missing, generated (ADMIN_TOKEN is printed once). Safe to run again: existing resources and
// secrets are found, not duplicated or rotated, and the generated section is replaced in place.
// With `dryRun`, nothing is called or written: every command it would run is printed instead.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import addresses from "email-addresses";
import { ROOT } from "./dev-server.mjs";

export const ENV_NAME = "production";
export const BLOCK_START = "# >>> deploy:setup";
export const BLOCK_END = "# <<< deploy:setup";

/** Secrets the Worker reads in production; the set-up generates each one that is missing (32 random bytes, base64). */
export const SECRETS = [
  { name: "ADMIN_TOKEN", why: "bearer token of the operator API", show: true },
  { name: "ENCRYPTION_KEY", why: "AES-256-GCM key (base64 of 32 bytes) for secrets at rest", show: false },
  { name: "SIGNING_KEY", why: "HMAC key for share tokens and download links", show: false },
];
/** Only with MAIL_TRANSPORT=http: the provider's token, which only the operator knows. */
export const MAIL_SECRET = { name: "MAIL_HTTP_TOKEN", why: "token of the JSON HTTP mail provider" };

/** What production mail goes through when no provider URL is given: nothing (never the local outbox). */
export const MAIL_OFF = "off";

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
export function runWrangler(args, { cwd = ROOT, env = process.env, input, terminal = false } = {}) {
  const bin = env.WRANGLER_BIN;
  const [command, argv] = bin ? [bin, args] : [process.execPath, [join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js"), ...args]];
  // `terminal`: wrangler talks to the person directly (its login opens a browser and waits); the
  // other calls are read by the set-up, so they run without prompts, reading `input` from stdin.
  const options = terminal
    ? { cwd, env: { ...env, WRANGLER_SEND_METRICS: "false" }, stdio: "inherit" }
    : { cwd, env: { ...env, CI: "true", WRANGLER_SEND_METRICS: "false" }, encoding: "utf8", input };
  const result = spawnSync(command, argv, options);
  if (result.error) throw result.error;
  return { status: result.status ?? 1, output: `${result.stdout ?? ""}${result.stderr ?? ""}` };
}

/** The command line a person would type for `args` (for --dry-run and messages). */
export function commandLine(args) {
  return ["npx", "wrangler", ...args].map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`)).join(" ");
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
const tomlTable = (header, object) => [
  header,
  ...Object.entries(object)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k} = ${tomlValue(v)}`),
  "",
];

/** A var of an earlier run (APP_URL, MAIL_HTTP_URL, ...), read back from its generated section. */
export function previousVar(text, name) {
  const block = generatedBlock(text);
  // Written with JSON.stringify (tomlValue): a TOML basic string, escapes included.
  const quoted = block ? new RegExp(`^${name}\\s*=\\s*("(?:[^"\\\\]|\\\\.)*")`, "m").exec(block)?.[1] : null;
  return quoted ? JSON.parse(quoted) || null : null;
}

/** The APP_URL of an earlier run, read back from its generated section. */
export function previousAppUrl(text) {
  return previousVar(text, "APP_URL");
}

/** True when wrangler.toml holds the section the set-up writes (what `npm run deploy` deploys). */
export function hasProductionSection(text) {
  return generatedBlock(text) !== null;
}

function generatedBlock(text) {
  const start = text.indexOf(BLOCK_START);
  const end = text.indexOf(BLOCK_END);
  return start >= 0 && end > start ? text.slice(start, end + BLOCK_END.length) : null;
}

/**
 * The `[env.production]` section for `config` (top level as read by wrangler) with the created
 * resources' ids. Vars are copied with APP_URL, MAIL_FROM and SANDBOX_DOMAIN replaced by the
 * operator's; ALLOW_PRIVATE_TARGETS is forced "false".
 */
export function productionSection(config, { databaseId, appUrl, mailUrl = null, mailFrom, sandboxDomain }) {
  if (!mailFrom || !sandboxDomain) throw new SetupError("the production section needs MAIL_FROM and SANDBOX_DOMAIN");
  const env = `env.${ENV_NAME}`;
  const lines = [
    BLOCK_START,
    "# Written by `npm run deploy:setup` (scripts/deploy-setup.mjs) from the top-level config above:",
    "# wrangler does not inherit vars or bindings into an environment, so they are repeated here.",
    "# Edit the top level, then run the set-up again; changes inside this block are overwritten.",
    `[${env}]`,
    "",
    ...tomlTable(`[${env}.vars]`, {
      ...config.vars,
      APP_URL: appUrl,
      ALLOW_PRIVATE_TARGETS: "false",
      // Never the outbox, which marks mail delivered without sending it.
      MAIL_TRANSPORT: mailUrl ? "http" : MAIL_OFF,
      MAIL_HTTP_URL: mailUrl ?? "",
      MAIL_FROM: mailFrom,
      SANDBOX_DOMAIN: sandboxDomain,
    }),
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

/** A URL given by the operator: https (http only for a loopback address), its origin kept for APP_URL. */
function httpsUrl(what, value) {
  let parsed;
  try {
    parsed = new URL(value);
  } catch {
    throw new SetupError(`${what} is not a URL: ${value}`);
  }
  if (parsed.protocol !== "https:") throw new SetupError(`${what} must be https in production: ${value}`);
  return parsed;
}

/**
 * Why nobody can own `domain`, or null: a name reserved by RFC 2606 / RFC 6761 (example.com,
 * .test, .invalid, ...), or the local default's domain (`taken`: the top-level config's MAIL_FROM
 * domain and SANDBOX_DOMAIN, or any subdomain of them), which belongs to whoever publishes this code.
 */
export function unownableDomain(domain, taken = []) {
  const name = domain.toLowerCase().replace(/\.$/, "");
  const under = (parent) => name === parent || name.endsWith(`.${parent}`);
  if (["example.com", "example.net", "example.org", "test", "example", "invalid", "localhost"].some(under)) {
    return `${name} is a reserved name (RFC 2606), which nobody can own`;
  }
  const local = taken.map((d) => d.toLowerCase()).find(under);
  if (local) return `${name} is the local default (${local}), not a domain of yours`;
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(name)) return `${name} is not a domain name`;
  return null;
}

/** The top-level config's mail domains (the local defaults): never written into production. */
export function localMailDomains(config) {
  const from = config.vars?.MAIL_FROM ? addresses.parseOneAddress(String(config.vars.MAIL_FROM))?.domain : null;
  return [from, config.vars?.SANDBOX_DOMAIN].filter(Boolean).map(String);
}

/** MAIL_FROM as given (`Name <address>` or an address), checked: one mailbox on a domain one can own. */
export function checkMailFrom(value, taken) {
  const parsed = addresses.parseOneAddress(value);
  if (parsed?.type !== "mailbox") throw new SetupError(`MAIL_FROM is not one email address: ${value}`);
  const problem = unownableDomain(parsed.domain, taken);
  if (problem) throw new SetupError(`MAIL_FROM must be on a domain you own: ${problem}`);
  return { value: value.trim(), domain: parsed.domain.toLowerCase() };
}

/** SANDBOX_DOMAIN as given, checked: a domain one can own, not the sending address's own domain. */
export function checkSandboxDomain(value, taken, fromDomain) {
  const name = value.trim().toLowerCase().replace(/\.$/, "");
  const problem = unownableDomain(name, taken);
  if (problem) throw new SetupError(`SANDBOX_DOMAIN must be a domain you own: ${problem}`);
  if (name === fromDomain) throw new SetupError(`SANDBOX_DOMAIN must differ from MAIL_FROM's domain (${fromDomain}): sandbox keys send only from it`);
  return name;
}

/** Wrangler's secret names for the production Worker; none when the Worker does not exist yet. */
function existingSecrets(configPath, wrangler) {
  const list = wrangler(["secret", "list", "--env", ENV_NAME, "--config", configPath, "--format", "json"]);
  if (list.status !== 0) {
    if (/does not exist|not found|10007/i.test(list.output)) return new Set();
    throw failed("wrangler secret list", list);
  }
  const start = list.output.indexOf("[");
  try {
    return new Set(JSON.parse(list.output.slice(start, list.output.lastIndexOf("]") + 1)).map((secret) => secret.name));
  } catch {
    throw new SetupError(`wrangler secret list --format json printed no JSON list:\n${list.output.trim()}`);
  }
}

/**
 * The whole set-up. Options: configPath; appUrl (else the one of an earlier run, else asked);
 * mailUrl (the JSON HTTP mail provider; else the earlier run's, else asked; none: mail is off);
 * mailFrom and sandboxDomain (the platform's sending address and the sandbox keys' domain; else
 * the earlier run's, else asked; required, and never a reserved name or the local defaults);
 * mailToken (MAIL_HTTP_TOKEN to put when it is missing; else asked); dryRun; ask (a question to the
 * person at the terminal, async, or null when nobody is there); wrangler (the runner, for tests);
 * log; warn. Returns { databaseId, appUrl, mailUrl, queues, secrets: [{name, created}], adminToken }.
 */
export async function deploySetup({
  configPath = join(ROOT, "wrangler.toml"),
  appUrl,
  mailUrl,
  mailFrom,
  sandboxDomain,
  mailToken,
  dryRun = false,
  ask = null,
  wrangler = runWrangler,
  log = console.log,
  warn = console.error,
} = {}) {
  const text = readFileSync(configPath, "utf8");
  appUrl ??= previousAppUrl(text);
  if (!appUrl && ask) appUrl = (await ask("Public https address of the API (APP_URL), e.g. https://api.example.com: ")).trim() || null;
  if (!appUrl) throw new SetupError("APP_URL is required on the first run: npm run deploy:setup -- --app-url https://api.example.com");
  appUrl = httpsUrl("APP_URL", appUrl).origin;

  mailUrl ??= previousVar(text, "MAIL_HTTP_URL");
  if (!mailUrl && ask) mailUrl = (await ask("Mail provider URL (a JSON HTTP API; leave empty and no mail will leave): ")).trim() || null;
  if (mailUrl) mailUrl = httpsUrl("The mail provider URL", mailUrl).href;

  // The platform's own mail (sign-in links, invitations, usage warnings, shares) goes out from
  // MAIL_FROM, and sandbox keys send from SANDBOX_DOMAIN: both must be the operator's, so they are
  // asked for (or refused until given), never copied from the local defaults.
  const taken = localMailDomains(readConfig(configPath));
  mailFrom ??= previousVar(text, "MAIL_FROM");
  if (!mailFrom && ask) {
    mailFrom = (await ask("Sending address of the platform's mail (MAIL_FROM), on a domain you own, e.g. Acme <no-reply@mail.acme.com>: ")).trim() || null;
  }
  if (!mailFrom) {
    throw new SetupError(
      'MAIL_FROM is required on the first run: the address the platform\'s own mail comes from, on a domain you own: --mail-from "Acme <no-reply@mail.acme.com>" (or the MAIL_FROM environment variable)',
    );
  }
  const from = checkMailFrom(mailFrom, taken);
  sandboxDomain ??= previousVar(text, "SANDBOX_DOMAIN");
  if (!sandboxDomain && ask) {
    const suggested = `sandbox.${from.domain}`;
    sandboxDomain = (await ask(`Sandbox domain for test keys (SANDBOX_DOMAIN), a domain you own [${suggested}]: `)).trim() || suggested;
  }
  if (!sandboxDomain) {
    throw new SetupError(
      "SANDBOX_DOMAIN is required on the first run: the domain sandbox keys send from, one you own: --sandbox-domain sandbox.acme.com (or the SANDBOX_DOMAIN environment variable)",
    );
  }
  sandboxDomain = checkSandboxDomain(sandboxDomain, taken, from.domain);
  mailFrom = from.value;

  // A dry run calls nothing: it prints each command, and the ids it cannot know are placeholders.
  const planned = [];
  const run = (args, options) => {
    if (!dryRun) return wrangler(args, options);
    planned.push(commandLine(args));
    log(`would run: ${commandLine(args)}`);
    return { status: 0, output: "" };
  };

  if (!dryRun) {
    const who = wrangler(["whoami"]);
    if (who.status !== 0 || /not authenticated|not logged in/i.test(who.output)) {
      if (!ask) {
        throw new SetupError("wrangler is not logged in: run `npx wrangler login` at a terminal, or set CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID");
      }
      log("wrangler is not logged in: starting `wrangler login`...");
      const login = wrangler(["login"], { terminal: true });
      if (login.status !== 0) throw new SetupError("wrangler login did not complete");
    }
  } else {
    log(`would run: ${commandLine(["whoami"])}   (and \`wrangler login\` at a terminal when it is not logged in)`);
  }

  const config = readConfig(configPath);
  const db = config.d1_databases?.[0];
  if (!db?.database_name) throw new SetupError("wrangler.toml declares no D1 database");
  const databaseId = dryRun
    ? (run(["d1", "list", "--json"]), run(["d1", "create", db.database_name]), `<id of ${db.database_name}>`)
    : ensureDatabase(db.database_name, wrangler, log);
  for (const bucket of config.r2_buckets ?? []) {
    const args = ["r2", "bucket", "create", bucket.bucket_name];
    dryRun ? run(args) : ensureNamed(`R2 bucket ${bucket.bucket_name}`, args, wrangler, log);
  }
  const queues = queueNames(config);
  for (const queue of queues) {
    const args = ["queues", "create", queue];
    dryRun ? run(args) : ensureNamed(`queue ${queue}`, args, wrangler, log);
  }

  const section = productionSection(config, { databaseId, appUrl, mailUrl, mailFrom, sandboxDomain });
  if (dryRun) {
    log(`would write [env.${ENV_NAME}] to ${configPath}:\n${section}`);
  } else {
    writeFileSync(configPath, withSection(text, section));
    log(`wrote [env.${ENV_NAME}] to ${configPath}`);
  }

  const migrate = run(["d1", "migrations", "apply", db.binding, "--remote", "--env", ENV_NAME, "--config", configPath]);
  if (migrate.status !== 0) throw failed("wrangler d1 migrations apply --remote", migrate);
  if (!dryRun) log(`D1 migrations applied to ${db.database_name} (remote)`);

  // Secrets: each missing one is generated and put; one already set is never rotated.
  const existing = dryRun
    ? (run(["secret", "list", "--env", ENV_NAME, "--config", configPath, "--format", "json"]), new Set())
    : existingSecrets(configPath, wrangler);
  const secrets = [];
  let adminToken = null;
  const put = (name, value) => {
    const result = run(["secret", "put", name, "--env", ENV_NAME, "--config", configPath], { input: `${value}\n` });
    if (result.status !== 0) throw failed(`wrangler secret put ${name}`, result);
  };
  for (const secret of SECRETS) {
    if (existing.has(secret.name)) {
      secrets.push({ name: secret.name, created: false });
      log(`secret ${secret.name}: already set (kept)`);
      continue;
    }
    const value = randomBytes(32).toString("base64");
    put(secret.name, value);
    secrets.push({ name: secret.name, created: true });
    if (secret.show && !dryRun) adminToken = value;
    if (!dryRun) log(`secret ${secret.name}: generated and put (${secret.why})`);
  }
  if (mailUrl) {
    if (existing.has(MAIL_SECRET.name)) {
      secrets.push({ name: MAIL_SECRET.name, created: false });
      log(`secret ${MAIL_SECRET.name}: already set (kept)`);
    } else {
      if (!mailToken && ask && !dryRun) mailToken = (await ask(`${MAIL_SECRET.name} (your mail provider's API token): `)).trim() || undefined;
      if (mailToken || dryRun) {
        put(MAIL_SECRET.name, mailToken ?? "<your provider's token>");
        secrets.push({ name: MAIL_SECRET.name, created: true });
      } else {
        secrets.push({ name: MAIL_SECRET.name, created: false, missing: true });
        warn(
          `secret ${MAIL_SECRET.name} is not set: put it with \`${commandLine(["secret", "put", MAIL_SECRET.name, "--env", ENV_NAME])}\` (mail fails until then)`,
        );
      }
    }
  } else {
    warn(
      [
        "",
        "!!! NO MAIL WILL LEAVE THIS DEPLOYMENT !!!",
        `No mail provider was given, so production runs with MAIL_TRANSPORT = "${MAIL_OFF}": every email, share and alert`,
        "mail fails with that reason (never marked delivered). Run the set-up again with",
        "--mail-url https://<your provider's JSON API> to send mail.",
        "",
      ].join("\n"),
    );
  }
  return { databaseId, appUrl, mailUrl, mailFrom, sandboxDomain, queues, secrets, adminToken, planned };
}

export { SetupError };
