// Browser checks of analytics: a page served from a local origin loads Plausible's own tracker
// package (@plausible-analytics/tracker, unchanged) pointed at the running `wrangler dev`, in
// Debian's Chromium; its pageview, an SPA navigation and a custom event are then found through
// the query API, and the realtime count sees the visitor. A second page loads our own tracker
// (/a/script.js with data-domain). The console's analytics pages are opened signed in at 1280 and
// 390 px, checked with axe-core and for sideways scroll, and screenshotted into
// test-results/console/ (files named analytics-*).
import { readFileSync } from "node:fs";
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ROOT } from "../lib/dev-server.mjs";
import { assert, eventually, expectStatus, request } from "./http.mjs";
import { checkAxe, launchBrowser } from "./browser.mjs";

const SHOTS = join(ROOT, "test-results", "console");
/** A person's desktop Chrome: headless Chromium says "HeadlessChrome", which the bot filter drops, as it should. */
const USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
const TRACKER = readFileSync(createRequire(import.meta.url).resolve("@plausible-analytics/tracker"), "utf8");

/** A local web site: `/` and `/pricing` load Plausible's package, `/own` our script. */
async function startSite(api, siteId) {
  const plausiblePage = `<!doctype html><html lang="en"><head><title>Shop</title><script type="module" src="/app.js"></script></head><body><h1>Shop</h1></body></html>`;
  const app = `import { init, track } from "/plausible.js";
init({ domain: ${JSON.stringify(siteId)}, endpoint: ${JSON.stringify(`${api}/api/event`)}, captureOnLocalhost: true });
window.signup = () => new Promise((resolve) => track("Signup", { props: { plan: "pro" }, callback: resolve }));`;
  const ownPage = `<!doctype html><html lang="en"><head><title>Own</title><script defer data-domain="${siteId}" src="${api}/a/script.js"></script></head><body><h1>Own</h1></body></html>`;
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://localhost").pathname;
    const [type, body] =
      path === "/plausible.js"
        ? ["text/javascript", TRACKER]
        : path === "/app.js"
          ? ["text/javascript", app]
          : path === "/own"
            ? ["text/html", ownPage]
            : ["text/html", plausiblePage];
    res.writeHead(200, { "content-type": `${type}; charset=utf-8` });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://localhost:${server.address().port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

export async function analyticsChecks({ url, adminToken, createTeamWithKey, defer }) {
  const ownerEmail = `analytics-${Date.now()}@example.com`;
  const team = await createTeamWithKey({ name: "Analytics shop", ownerEmail, domains: [] });
  const key = team.key;
  const site = expectStatus(await request(url, "POST", "/api/v1/analytics/sites", { key, body: { domain: "localhost" } }), 201, "site").body.data;
  const local = await startSite(url, site.id);
  defer(() => local.close());
  const browser = await launchBrowser(defer);
  mkdirSync(SHOTS, { recursive: true });

  const query = async (body) =>
    expectStatus(await request(url, "POST", "/api/v1/analytics/query", { key, body: { site_id: site.id, date_range: "day", ...body } }), 200, "query").body;
  const pages = async () =>
    Object.fromEntries((await query({ metrics: ["pageviews"], dimensions: ["event:page"] })).results.map((r) => [r.dimensions[0], r.metrics[0]]));

  return {
    "analytics: Plausible's tracker package counts a pageview, an SPA navigation and a custom event": async () => {
      const context = await browser.newContext({ userAgent: USER_AGENT });
      // Plausible's tracker ignores automated browsers (navigator.webdriver): this one plays a person's.
      await context.addInitScript(() => Object.defineProperty(Navigator.prototype, "webdriver", { get: () => false }));
      const page = await context.newPage();
      const answers = [];
      page.on("response", (res) => res.url().endsWith("/api/event") && answers.push(`${res.status()} ${res.headers()["x-analytics-dropped"] ?? ""}`));
      await page.goto(`${local.origin}/pricing?utm_source=e2e`);
      await eventually(async () => {
        assert.equal((await pages())["/pricing"], 1, `answers to the tracker: ${answers.join(", ")}`);
        return true;
      });
      await page.evaluate(() => history.pushState({}, "", "/docs"));
      const sent = await page.evaluate(() => window.signup());
      assert.equal(sent.status, 202, `the tracker's callback: ${JSON.stringify(sent)}`);
      // The custom event's 202 comes before the isolate's batch writes it, and it may be written in
      // a later batch than the SPA pageview: the totals are awaited like the pages.
      await eventually(async () => {
        assert.deepEqual(await pages(), { "/pricing": 1, "/docs": 1 });
        const totals = await query({ metrics: ["visitors", "pageviews", "events"] });
        assert.deepEqual(totals.results, [{ dimensions: [], metrics: [1, 2, 3] }]);
        return true;
      });
      const names = await query({ metrics: ["events"], dimensions: ["event:name", "visit:source"] });
      assert.deepEqual(
        names.results.map((r) => r.dimensions),
        [
          ["pageview", "e2e"],
          ["Signup", "e2e"],
        ],
      );
      const realtime = expectStatus(await request(url, "GET", `/api/v1/analytics/sites/${site.id}/realtime`, { key }), 200, "realtime");
      assert.equal(realtime.body.data.visitors, 1);
      await context.close();
    },

    "analytics: our tracker at /a/script.js counts a pageview with sendBeacon": async () => {
      const context = await browser.newContext({ userAgent: USER_AGENT });
      const page = await context.newPage();
      await page.goto(`${local.origin}/own`);
      await eventually(async () => {
        assert.equal((await pages())["/own"], 1);
        return true;
      });
      await context.close();
    },

    "analytics: the console page shows the site's numbers, axe-clean at 1280 and 390 px, no sideways scroll": async () => {
      const minted = expectStatus(
        await request(url, "POST", "/api/v1/admin/sign-in-links", { key: adminToken, body: { email: ownerEmail } }),
        201,
        "sign-in link",
      );
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const app = `http://localhost:${new URL(url).port}`;
      await page.goto(minted.body.data.url.replace(/^http:\/\/[^/]+/, app));
      await page.click("[data-testid=confirm-sign-in]");
      await page.waitForURL(/\/console\/teams\/[0-9a-f-]{36}\/keys$/);
      await page.goto(`${app}/console/teams/${team.teamId}/analytics/sites/${site.id}?range=day`);
      assert.equal(await page.textContent("[data-testid=total-pageviews]"), "3");
      await page.screenshot({ path: join(SHOTS, "analytics-01-site.png"), fullPage: true });
      await checkAxe(page, "analytics site page");
      await page.goto(`${app}/console/teams/${team.teamId}/analytics`);
      await checkAxe(page, "analytics sites page");
      await page.screenshot({ path: join(SHOTS, "analytics-02-sites.png"), fullPage: true });
      // At 390 px: no sideways scroll, axe-clean, for the site over each range and the list.
      await page.setViewportSize({ width: 390, height: 844 });
      const widths = {};
      for (const [n, path] of [
        [3, `analytics/sites/${site.id}?range=day`],
        [4, `analytics/sites/${site.id}?range=30d`],
        [5, "analytics"],
      ]) {
        await page.goto(`${app}/console/teams/${team.teamId}/${path}`);
        widths[path] = await page.evaluate(() => document.documentElement.scrollWidth);
        await page.screenshot({ path: join(SHOTS, `analytics-0${n}-390-${path.replace(/\W+/g, "-").slice(0, 40)}.png`), fullPage: true });
        await checkAxe(page, `${path} at 390 px`);
      }
      assert.deepEqual(
        Object.entries(widths).filter(([, width]) => width > 390),
        [],
        "analytics pages wider than the screen",
      );
      await context.close();
    },
  };
}
