// Starting and stopping `wrangler dev` for the start script, the end-to-end smoke run and the
// benchmarks: local secrets, local migrations, a free port, a readiness wait, a clean stop.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { importSource } from "./source-bundle.mjs";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

/** Random local secrets in .dev.vars format. */
export function freshSecrets(adminToken) {
  return {
    ADMIN_TOKEN: adminToken ?? randomBytes(24).toString("base64url"),
    ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    SIGNING_KEY: randomBytes(32).toString("base64url"),
    ALLOW_PRIVATE_TARGETS: "true",
  };
}

export function parseVars(text) {
  const vars = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([A-Z0-9_]+)\s*=\s*"?(.*?)"?\s*$/.exec(line);
    if (m) vars[m[1]] = m[2];
  }
  return vars;
}

export function writeVars(path, vars) {
  const body =
    Object.entries(vars)
      .map(([k, v]) => `${k}="${v}"`)
      .join("\n") + "\n";
  writeFileSync(path, body, { mode: 0o600 });
}

/**
 * The env file of one `npm start` run, keyed by its port: two servers in one checkout each keep
 * their own operator token (a shared file let the second start rewrite the first one's token).
 */
export function effectiveVarsPath(port, root = ROOT) {
  return join(root, ".wrangler", `dev.vars.${port}.effective`);
}

/**
 * Writes the secrets of the run on `port` to its own file (mode 0600) and returns
 * { path, remove }; remove() deletes that file only, and may be called more than once.
 */
export function writeEffectiveVars(port, vars, root = ROOT) {
  const path = effectiveVarsPath(port, root);
  mkdirSync(dirname(path), { recursive: true });
  writeVars(path, vars);
  return { path, remove: () => rmSync(path, { force: true }) };
}

/** Reads .dev.vars, creating it with random secrets when missing. */
export function ensureDevVars(path = join(ROOT, ".dev.vars")) {
  if (!existsSync(path)) {
    writeVars(path, freshSecrets());
    console.log(`created ${path} with random local secrets`);
  }
  return parseVars(readFileSync(path, "utf8"));
}

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Applies the D1 migrations to the local database (optionally in another persistence folder). */
export function applyMigrations({ persistTo } = {}) {
  const args = [WRANGLER, "d1", "migrations", "apply", "DB", "--local"];
  if (persistTo) args.push("--persist-to", persistTo);
  const result = spawnSync(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CI: "true" } });
  if (result.status !== 0) {
    process.stderr.write(result.stdout);
    process.stderr.write(result.stderr);
    throw new Error("applying local migrations failed");
  }
}

const ANSI = /\x1b\[[0-9;]*m/g;

/**
 * A filter of wrangler dev's output lines for `npm start` (`startDevServer({ filter })`): it
 * returns the line, or null to drop it. What it drops, and why:
 * - every bindings table after the first, with its "⎔ Connection status updated" line: wrangler
 *   prints the table again whenever its dev registry changes (our own registration as a queue
 *   consumer, and any other `wrangler dev` on the machine starting or stopping), and nothing in
 *   it changes (this Worker binds no other local Worker);
 * - miniflare's "Unable to fetch the `Request.cf` object" warning and its stack trace. The start
 *   sets CLOUDFLARE_CF_FETCH_ENABLED=false, which skips that network lookup, so the warning only
 *   shows if a wrangler upgrade ignores the setting: offline, the lookup fails with ENOTFOUND and
 *   a stack trace, and the placeholder it falls back to is all the Worker gets anyway (it reads
 *   nothing of request.cf).
 */
export function quietOutputFilter() {
  let tables = 0;
  let inTable = false;
  let inTrace = false;
  return (line) => {
    const text = line.replace(ANSI, "");
    if (inTrace) {
      if (/^\s+at |^(Error|TypeError)\b.*ENOTFOUND|getaddrinfo/.test(text)) return null;
      inTrace = false;
    }
    if (text.includes("Unable to fetch the `Request.cf` object")) {
      inTrace = true;
      return null;
    }
    if (text.startsWith("Your Worker has access to the following bindings")) {
      tables += 1;
      inTable = true;
    } else if (inTable && text.trim() === "") {
      inTable = false;
      if (tables > 1) return null;
    }
    if (inTable && tables > 1) return null;
    if (text.includes("Connection status updated")) return null;
    return line;
  };
}

/** Feeds `stream`'s lines through `filter` to `out` (a line without its newline, at the end, too). */
function pipeLines(stream, filter, out) {
  let rest = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop();
    for (const line of lines) {
      const kept = filter(line);
      if (kept !== null) out.write(`${kept}\n`);
    }
  });
  stream.on("end", () => {
    if (rest && filter(rest) !== null) out.write(rest);
  });
}

/**
 * Starts `wrangler dev` on `port`. Options: persistTo, envFile (a .dev.vars-format file used
 * instead of .dev.vars), vars (extra --var), testScheduled, quiet, logLevel (--log-level),
 * inspectorPort (default: a free port, so several servers can run side by side; null leaves the
 * choice to wrangler, which takes 9229 when it is free), signal (an AbortSignal: aborting while
 * waiting for readiness stops the server and rejects), script (another entry point than
 * wrangler.toml's `main`, relative to the repository: the benchmarks' bench/worker.ts), env (extra
 * environment variables for wrangler), filter (quiet: false only: each output line goes through
 * it to this process's stdout or stderr, dropped when it returns null: quietOutputFilter()).
 * Request.cf is never fetched (CLOUDFLARE_CF_FETCH_ENABLED=false): the Worker reads nothing of it,
 * and offline the lookup prints an ENOTFOUND stack trace.
 * Returns { url, child, stop(), output() }; stop() resolves once wrangler has exited.
 */
export async function startDevServer({
  port,
  persistTo,
  envFile,
  vars = {},
  testScheduled = false,
  quiet = true,
  logLevel,
  inspectorPort,
  signal,
  script,
  env = {},
  filter,
} = {}) {
  const args = [WRANGLER, "dev", ...(script ? [script] : []), "--port", String(port), "--ip", "127.0.0.1", "--show-interactive-dev-session=false"];
  if (inspectorPort === undefined) inspectorPort = await freePort();
  if (inspectorPort !== null) args.push("--inspector-port", String(inspectorPort));
  if (persistTo) args.push("--persist-to", persistTo);
  if (envFile) args.push("--env-file", envFile);
  if (testScheduled) args.push("--test-scheduled");
  if (logLevel) args.push("--log-level", logLevel);
  const allVars = { APP_URL: `http://localhost:${port}`, ...vars };
  for (const [k, v] of Object.entries(allVars)) args.push("--var", `${k}:${v}`);
  const piped = quiet || filter;
  // Piped output loses wrangler's colours unless they are forced (only when ours is a terminal).
  const colour = filter && process.stdout.isTTY && !process.env.NO_COLOR ? { FORCE_COLOR: "1" } : {};
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: piped ? ["ignore", "pipe", "pipe"] : ["ignore", "inherit", "inherit"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", ...colour, ...env },
    detached: true,
  });
  if (filter && !quiet) {
    pipeLines(child.stdout, filter, process.stdout);
    pipeLines(child.stderr, filter, process.stderr);
  }
  let output = "";
  if (quiet) {
    child.stdout.on("data", (d) => (output = (output + d).slice(-20000)));
    child.stderr.on("data", (d) => (output = (output + d).slice(-20000)));
  }
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const signalGroup = (name) => {
    try {
      process.kill(-child.pid, name);
    } catch {
      /* already gone */
    }
  };
  /** SIGTERM to wrangler's process group; SIGKILL if it has not exited after 5 s. */
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    signalGroup("SIGTERM");
    const timer = setTimeout(() => signalGroup("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early (${child.exitCode}):\n${output}`);
    if (signal?.aborted) {
      await stop();
      throw signal.reason ?? new Error("aborted");
    }
    try {
      // A Worker that fails to load (a Durable Object class not exported) leaves the port open and
      // never answers: each probe gives up after 5 s, so the 90 s deadline below holds.
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) });
      if (res.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev did not become ready in 90 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return { url, child, stop, output: () => output };
}

/** Calls the operator API. */
export async function adminCall(url, token, method, path, body) {
  const res = await fetch(`${url}/api/v1/admin/${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/**
 * The specification's scopes, a demo key's: the registered products' and the platform's
 * (src/platform/scopes.ts over src/products/index.ts, bundled into Node once).
 */
let specScopes;
export async function demoScopes() {
  specScopes ??= importSource('import "./src/products/index.ts"; export { specScopes } from "./src/platform/scopes.ts";').then((m) => [...m.specScopes()]);
  return specScopes;
}

/** Creates a team and a key with every scope; returns { teamId, key }. */
export async function createTeamWithKey(
  url,
  adminToken,
  { name = "Demo team", plan = "pro", ownerEmail = "owner@example.com", scopes, domains = ["example.com"] } = {},
) {
  scopes ??= await demoScopes();
  const team = await adminCall(url, adminToken, "POST", "teams", { name, plan, owner_email: ownerEmail });
  if (team.status !== 201) throw new Error(`creating a team failed: ${team.status} ${JSON.stringify(team.body)}`);
  const key = await adminCall(url, adminToken, "POST", `teams/${team.body.data.id}/keys`, { name: "all scopes", scopes });
  if (key.status !== 201) throw new Error(`creating a key failed: ${key.status} ${JSON.stringify(key.body)}`);
  // Live keys send only from verified domains: the operator verifies the demo sending domain.
  for (const domain of domains) {
    const res = await adminCall(url, adminToken, "POST", `teams/${team.body.data.id}/domains`, { name: domain });
    if (res.status !== 201) throw new Error(`verifying ${domain} failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return { teamId: team.body.data.id, key: key.body.data.key, keyId: key.body.data.id };
}
