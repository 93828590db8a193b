// Browser checks of the console: Debian's Chromium driven by playwright-core against the running
// `wrangler dev`, at APP_URL's origin (http://localhost:<port>), as a new user would: sign up,
// follow the link (read from the Worker's log: the outbox transport prints console links there),
// create a key with two scopes and use it with fetch, revoke it (then 401), invite a member who
// joins from the invitation, sign out. Every page is checked with axe-core (no serious or
// critical violation) and screenshotted into test-results/console/; a Content-Security-Policy
// violation reported by the browser fails the run.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../lib/dev-server.mjs";
import { consoleInsightChecks } from "./console-insight.mjs";
import { assert, eventually, request } from "./http.mjs";
import { checkAxe, launchBrowser } from "./browser.mjs";

const SHOTS = join(ROOT, "test-results", "console");

/** The newest console link of `kind` the Worker logged for `email`. */
function loggedLink(output, email, kind) {
  const lines = output()
    .split("\n")
    .filter((line) => line.includes('"console link') && line.includes(`"to":"${email}"`) && line.includes(`"kind":"${kind}"`));
  const last = lines.at(-1);
  return last ? /"url":"([^"]+)"/.exec(last)?.[1] : undefined;
}

export async function consoleChecks(ctx) {
  const { url, adminToken, output, defer } = ctx;
  const port = new URL(url).port;
  // The browser uses APP_URL's origin: the Origin rule refuses forms posted from any other.
  const app = `http://localhost:${port}`;
  mkdirSync(SHOTS, { recursive: true });
  const browser = await launchBrowser(defer);

  const cspViolations = [];
  const newPage = async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    page.on("console", (message) => {
      if (/Content Security Policy|Refused to (load|execute|apply)/i.test(message.text())) cspViolations.push(`${page.url()}: ${message.text()}`);
    });
    return page;
  };

  /** A full-page screenshot, then axe-core on the page as it is. */
  const audited = [];
  const check = async (page, name) => {
    await page.screenshot({ path: join(SHOTS, `${String(audited.length + 1).padStart(2, "0")}-${name}.png`), fullPage: true });
    audited.push(name);
    await checkAxe(page, name);
  };

  const email = `founder-${Date.now()}@example.com`;
  const invitee = `teammate-${Date.now()}@example.com`;
  const state = {};
  let owner;

  const checks = {
    "console: the landing page links the console, the sign-up and the API reference": async () => {
      const page = await newPage();
      await page.goto(`${app}/`);
      for (const href of ["/console/sign-in", "/console/sign-up", "/api/v1/docs"]) assert.ok(await page.locator(`a[href="${href}"]`).count(), href);
      await check(page, "landing");
      await page.close();
    },

    "console: sign up, follow the link from the log, confirm, land on the keys page": async () => {
      owner = await newPage();
      await owner.goto(`${app}/console/sign-up`);
      await check(owner, "sign-up");
      await owner.fill("input[name=email]", email);
      await owner.fill("input[name=team_name]", "Acme Robotics");
      await owner.click("button[type=submit]");
      // The local outbox sends no mail: the page says the link is in the terminal.
      await owner.waitForSelector("[data-testid=check-terminal]");
      await check(owner, "check-terminal");
      const link = await eventually(() => loggedLink(output, email, "sign_up"));
      assert.ok(link.startsWith(`${app}/console/auth/`), link);
      await owner.goto(link);
      await check(owner, "confirm-link");
      await owner.click("[data-testid=confirm-sign-in]");
      await owner.waitForURL(/\/console\/teams\/[0-9a-f-]{36}\/keys$/);
      state.teamId = /teams\/([0-9a-f-]{36})\//.exec(owner.url())[1];
      // The bundled script ran under the CSP: it reveals the copy buttons it wires.
      await check(owner, "keys-empty");
    },

    "console: create a key with two scopes, copy button shown, the key works with fetch": async () => {
      await owner.fill("form[data-testid=create-key] input[name=name]", "Deploy bot");
      await owner.check("input[name=scopes][value='logs:read']");
      await owner.check("input[name=scopes][value='logs:write']");
      await owner.click("form[data-testid=create-key] button:has-text('Create key')");
      const key = (await owner.locator("[data-testid=new-key]").textContent()).trim();
      assert.match(key, /^edp_[A-Za-z0-9_-]{43}$/);
      assert.equal(await owner.locator("button[data-copy]").isVisible(), true, "the copy button (shown by the bundled script)");
      await check(owner, "key-created");
      state.key = key;
      const created = await request(url, "POST", "/api/v1/logs/projects", { key, body: { name: "from-the-console" } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal((await request(url, "GET", "/api/v1/logs/projects", { key })).status, 200);
      assert.equal((await request(url, "GET", "/api/v1/surveys", { key })).status, 403);
      await owner.goto(`${app}/console/teams/${state.teamId}/keys`);
      assert.equal(await owner.locator("[data-testid=key-row]").count(), 1);
      assert.equal(await owner.locator("[data-testid=new-key]").count(), 0, "the plaintext is shown once");
      await check(owner, "keys-list");
    },

    "console: a form past the size limit answers a page that says what to do, and nothing is saved": async () => {
      // A name filled past the form's 1 MB limit by script (the field's own limits set aside).
      await owner.evaluate(() => {
        const input = document.querySelector("form[data-testid=create-key] input[name=name]");
        input.removeAttribute("maxlength");
        input.value = "x".repeat(1024 * 1024 + 1);
      });
      await owner.check("input[name=scopes][value='logs:read']");
      const [answer] = await Promise.all([
        owner.waitForResponse((response) => response.request().method() === "POST"),
        owner.click("form[data-testid=create-key] button:has-text('Create key')"),
      ]);
      assert.equal(answer.status(), 413);
      await owner.waitForLoadState();
      assert.match(await owner.locator("h1").textContent(), /Too large/);
      assert.match(await owner.locator("body").textContent(), /Shorten it and send the form again; nothing was saved/);
      await check(owner, "form-too-large");
      await owner.goto(`${app}/console/teams/${state.teamId}/keys`);
      assert.equal(await owner.locator("[data-testid=key-row]").count(), 1, "no key was created");
    },

    "console: a signed-in member's error pages keep their console: a missing page inside the team's sidebar, elsewhere the signed-in top bar": async () => {
      const missing = await owner.goto(`${app}/console/teams/${state.teamId}/nothing-here`);
      assert.equal(missing.status(), 404);
      assert.match(await owner.locator("h1").textContent(), /Page not found/);
      assert.equal(await owner.locator("nav[aria-label=Products]").count(), 1, "the team's navigation");
      await check(owner, "not-found-in-team");
      const elsewhere = await owner.goto(`${app}/console/nothing-here`);
      assert.equal(elsewhere.status(), 404);
      assert.equal(await owner.locator("form[action='/console/sign-out']").count(), 1, "signing out, not in");
      assert.equal(await owner.locator("a[href='/console/sign-in']").count(), 0);
      await check(owner, "not-found-signed-in");
      await owner.goto(`${app}/console/teams/${state.teamId}/keys`);
    },

    "console: revoke the key behind a confirmation; it answers 401 at once": async () => {
      await owner.click("[data-testid=key-row] form[data-testid=revoke-key] button");
      await owner.waitForSelector("[data-testid=confirm-revoke]");
      await check(owner, "revoke-confirm");
      await owner.click("[data-testid=confirm-revoke]");
      await owner.waitForURL(/notice=revoked/);
      assert.equal(await owner.locator("[data-testid=key-row]").count(), 0);
      await check(owner, "key-revoked");
      await eventually(async () => (await request(url, "GET", "/api/v1/logs/projects", { key: state.key })).status === 401);
    },

    "console: invite a member; the invitation link makes them a developer of the team": async () => {
      await owner.goto(`${app}/console/teams/${state.teamId}/members`);
      await owner.fill("form[data-testid=invite-member] input[name=email]", invitee);
      await owner.selectOption("form[data-testid=invite-member] select[name=role]", "developer");
      await owner.click("form[data-testid=invite-member] button[type=submit]");
      await owner.waitForURL(/notice=invited/);
      assert.equal(await owner.locator("[data-testid=invitation-row]").count(), 1);
      await check(owner, "members");
      const link = await eventually(() => loggedLink(output, invitee, "invite"));
      const teammate = await newPage();
      await teammate.goto(link);
      await teammate.click("[data-testid=confirm-sign-in]");
      await teammate.waitForURL(new RegExp(`/console/teams/${state.teamId}/keys$`));
      assert.equal(await teammate.locator("form[data-testid=create-key]").count(), 1, "a developer may create keys");
      await teammate.goto(`${app}/console/teams/${state.teamId}/members`);
      assert.equal(await teammate.locator("form[data-testid=invite-member]").count(), 0, "a developer does not manage members");
      await check(teammate, "members-as-developer");
      await teammate.close();
      await owner.reload();
      assert.equal(await owner.locator("[data-testid=member-row]").count(), 2);
    },

    "console: sign out everywhere; the old session opens nothing": async () => {
      await owner.click("button:has-text('Sign out everywhere')");
      await owner.waitForURL(/\/console\/sign-in$/);
      await check(owner, "sign-in");
      await owner.goto(`${app}/console/teams/${state.teamId}/keys`);
      assert.match(owner.url(), /\/console\/sign-in$/);
      // An operator link signs the owner in again (support, npm start).
      const minted = await request(url, "POST", "/api/v1/admin/sign-in-links", { key: adminToken, body: { email } });
      assert.equal(minted.status, 201, JSON.stringify(minted.body));
      await owner.goto(minted.body.data.url.replace(/^http:\/\/[^/]+/, app));
      await owner.click("[data-testid=confirm-sign-in]");
      await owner.waitForURL(/\/console\/teams\/[0-9a-f-]{36}\/keys$/);
      await owner.close();
    },

    "console: no Content-Security-Policy violation on any page": async () => {
      assert.deepEqual(cspViolations, []);
      assert.ok(audited.length >= 12, `pages audited: ${audited.join(", ")}`);
    },
  };
  // The usage and requests pages (scripts/e2e/console-insight.mjs).
  return { ...checks, ...(await consoleInsightChecks(ctx)) };
}
