// Browser checks of the console's usage and requests pages: Debian's Chromium driven by
// playwright-core against the running `wrangler dev`, at APP_URL's origin. The team's owner signs
// in from an operator-minted link and makes a key in the browser; it is used with fetch, as curl
// would (one success, one refusal), and both requests show up in the request log (the error row opens to the body we
// answered, the 4xx filter keeps only it); the usage page shows every metered service with its
// limit and the rate-limit window. Both pages are checked with axe-core (no serious or critical
// violation) and screenshotted into test-results/console/ (ignored by git); a Content-Security-
// Policy violation reported by the browser fails the check.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../lib/dev-server.mjs";
import { assert, eventually, expectStatus, request } from "./http.mjs";
import { checkAxe, launchBrowser } from "./browser.mjs";

const SHOTS = join(ROOT, "test-results", "console");
const SERVICES = ["mail", "ai", "surveys", "push", "webhooks", "logs"];

export async function consoleInsightChecks({ url, adminToken, defer }) {
  const port = new URL(url).port;
  // The browser uses APP_URL's origin: the sign-in link's confirmation is a form POST.
  const app = `http://localhost:${port}`;
  mkdirSync(SHOTS, { recursive: true });
  const browser = await launchBrowser(defer);

  const email = `insight-${Date.now()}@example.com`;
  const team = expectStatus(
    await request(url, "POST", "/api/v1/admin/teams", { key: adminToken, body: { name: "Insight Labs", plan: "free", owner_email: email } }),
    201,
    "create team",
  ).body.data;
  /** The key made in the browser: `key` its plaintext, `prefix` what the console shows of it. */
  const key = {};

  const cspViolations = [];
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to (load|execute|apply)/i.test(message.text())) cspViolations.push(`${page.url()}: ${message.text()}`);
  });

  /** A full-page screenshot, then axe-core on the page as it is (no serious or critical violation). */
  const audit = async (name) => {
    await page.screenshot({ path: join(SHOTS, `insight-${name}.png`), fullPage: true });
    await checkAxe(page, name);
    assert.deepEqual(cspViolations, [], "CSP violations");
  };

  const base = `${app}/console/teams/${team.id}`;
  let refused;

  return {
    "console insight: the owner signs in from an operator-minted link": async () => {
      const link = expectStatus(await request(url, "POST", "/api/v1/admin/sign-in-links", { key: adminToken, body: { email } }), 201, "sign-in link").body.data;
      await page.goto(link.url.replace(/^https?:\/\/[^/]+/, app));
      await page.click("[data-testid=confirm-sign-in]");
      await page.waitForURL(/\/console\/teams\//);
    },

    "console insight: a key made in the browser": async () => {
      await page.goto(`${base}/keys`);
      await page.fill("form[data-testid=create-key] input[name=name]", "curl key");
      await page.check("form[data-testid=create-key] input[name=scopes][value='billing:read']");
      await page.click("form[data-testid=create-key] button:has-text('Create key')");
      key.key = (await page.locator("[data-testid=new-key]").textContent()).trim();
      assert.match(key.key, /^edp_/);
      key.prefix = key.key.slice(0, 12);
    },

    "console insight: a key used with fetch shows up in the request log, the error row opens to our body": async () => {
      // As curl would: one success, one refusal (the key holds billing:read only).
      expectStatus(await request(url, "GET", "/api/v1/usage", { key: key.key, headers: { "x-request-id": "e2e-insight-ok" } }), 200, "usage with the key");
      refused = expectStatus(
        await request(url, "GET", "/api/v1/push/apps", { key: key.key, headers: { "x-request-id": "e2e-insight-refused" } }),
        403,
        "push apps without the scope",
      );
      // Written after the answers: the rows appear within moments.
      const statuses = await eventually(async () => {
        await page.goto(`${base}/requests`);
        const found = await page.locator("[data-testid=request-row]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-status")));
        return found.length >= 2 ? found : null;
      });
      assert.deepEqual(statuses.slice(0, 2), ["403", "200"]);
      const errorRow = page.locator('[data-testid=request-row][data-request-id="e2e-insight-refused"]');
      await errorRow.locator("summary").click();
      assert.deepEqual(JSON.parse(await errorRow.locator("details pre").textContent()), refused.body);
      const okRow = await page.locator('[data-testid=request-row][data-request-id="e2e-insight-ok"]').textContent();
      assert.ok(okRow.includes(key.prefix), `the row shows the key's prefix ${key.prefix}: ${okRow}`);
      await audit("requests");
      // The API answers the same log.
      const api = expectStatus(await request(url, "GET", "/api/v1/requests?status=4xx", { key: key.key }), 200, "GET /api/v1/requests").body;
      assert.ok(api.data.some((r) => r.request_id === "e2e-insight-refused" && r.status === 403));
    },

    "console insight: the 4xx filter keeps only the refusal": async () => {
      await page.goto(`${base}/requests`);
      await page.click('nav[aria-label="Filter by status"] >> text=4xx');
      await page.waitForURL(/status=4xx/);
      const statuses = await page.locator("[data-testid=request-row]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-status")));
      assert.ok(statuses.length >= 1 && statuses.every((s) => s.startsWith("4")), JSON.stringify(statuses));
      await audit("requests-4xx");
    },

    "console insight: the usage page shows every metered service, its limit and the rate-limit window": async () => {
      await page.goto(`${base}/usage`);
      const usage = expectStatus(await request(url, "GET", "/api/v1/usage", { key: key.key }), 200, "GET /api/v1/usage").body.data;
      for (const service of SERVICES) {
        const card = page.locator(`[data-testid=usage-${service}]`);
        assert.equal(await card.count(), 1, service);
        assert.equal(await card.getAttribute("data-limit"), String(usage.services[service].limit), `${service} limit`);
        assert.equal(await card.getAttribute("data-used"), String(usage.services[service].used), `${service} used`);
        assert.equal(await card.locator("svg.usage-bar line.mark").count(), 2, `${service} marks`);
      }
      assert.equal(await page.locator("[data-testid=rate-limit-window]").getAttribute("data-limit"), "600");
      await audit("usage");
    },
  };
}
