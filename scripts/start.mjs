// `npm start`: local secrets in .dev.vars (created once), local D1 migrations, `wrangler dev` on
// PORT (default 8787) with APP_URL following the port, a demo team with an every-scope key, and a
// console sign-in link for the demo team's owner.
// ADMIN_TOKEN and PORT from the environment take precedence over .dev.vars and the default.
// Each run writes its secrets to its own file keyed by the port (.wrangler/dev.vars.<port>.effective)
// and removes it on exit, so a second server on another port never changes the first one's token.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  adminCall,
  applyMigrations,
  createTeamWithKey,
  ensureDevVars,
  quietOutputFilter,
  ROOT,
  startDevServer,
  writeEffectiveVars,
} from "./lib/dev-server.mjs";
import { startBanner } from "./lib/start-banner.ts";

const port = Number(process.env.PORT ?? 8787);
const vars = ensureDevVars();
if (process.env.ADMIN_TOKEN) vars.ADMIN_TOKEN = process.env.ADMIN_TOKEN;

const effectiveVars = writeEffectiveVars(port, vars);
// Whatever ends the process (Ctrl-C, wrangler exiting, a failed start) removes this run's file.
process.on("exit", () => effectiveVars.remove());
// Signals are handled from here on, so a Ctrl-C during start-up still exits through "exit": while
// wrangler is starting, aborting makes startDevServer stop it (it runs in its own process group).
const starting = new AbortController();
let server;
const stop = async () => {
  if (!server) return starting.abort(new Error("interrupted during start-up"));
  await server.stop();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

console.log("applying local D1 migrations...");
applyMigrations();

console.log(`starting wrangler dev on http://localhost:${port} ...`);
// inspectorPort: null keeps wrangler's own choice (9229 when free) for attaching a debugger.
try {
  // One bindings table, no Request.cf lookup or its stack trace (quietOutputFilter() says why).
  server = await startDevServer({
    port,
    envFile: effectiveVars.path,
    quiet: false,
    filter: quietOutputFilter(),
    testScheduled: true,
    inspectorPort: null,
    signal: starting.signal,
  });
} catch (error) {
  console.error(error?.message ?? error);
  process.exit(1);
}
server.child.on("exit", (code) => process.exit(code ?? 0));

const demoFile = join(ROOT, ".wrangler", "demo.json");
/** The demo team's verified sending domain, so the README's mail example sends as it is. */
const DEMO_DOMAIN = "example.com";
let demo = existsSync(demoFile) ? JSON.parse(readFileSync(demoFile, "utf8")) : null;
if (demo) {
  const check = await fetch(`${server.url}/api/v1/usage`, { headers: { authorization: `Bearer ${demo.key}` } });
  if (check.status === 401) demo = null; // local state was wiped: create the demo team again
}
if (!demo) {
  demo = await createTeamWithKey(server.url, vars.ADMIN_TOKEN, { name: "Demo team", plan: "pro", domains: [DEMO_DOMAIN] });
  writeFileSync(demoFile, JSON.stringify(demo, null, 2), { mode: 0o600 });
} else {
  // A demo team from before sending domains existed gets its verified demo domain (idempotent).
  await fetch(`${server.url}/api/v1/admin/teams/${demo.teamId}/domains`, {
    method: "POST",
    headers: { authorization: `Bearer ${vars.ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ name: DEMO_DOMAIN }),
  });
}

// One click from the console: the demo team's owner (a member whatever state the team is from)
// and a one-time sign-in link for them (15 minutes; `npm start` again prints a fresh one).
const DEMO_OWNER = "owner@example.com";
await adminCall(server.url, vars.ADMIN_TOKEN, "POST", `teams/${demo.teamId}/members`, { email: DEMO_OWNER, role: "owner" });
const link = await adminCall(server.url, vars.ADMIN_TOKEN, "POST", "sign-in-links", { email: DEMO_OWNER });
const signInLink = link.status === 201 ? link.body.data.url : `(no link: ${link.status})`;

console.log(startBanner({ base: `http://localhost:${port}`, teamId: demo.teamId, key: demo.key, owner: DEMO_OWNER, signInLink, domain: DEMO_DOMAIN }));
