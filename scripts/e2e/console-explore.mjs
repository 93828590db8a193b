// The console's Logs and Webhook relay pages in Chromium (playwright-core) against the running
// `wrangler dev`: a member signs in through a one-time link; the explorer's search finds a line
// ingested over HTTP; the live tail shows a line ingested over HTTP without a reload; a relay
// event's attempts are listed and a replay from the page reaches a local receiver. axe-core runs
// on every page (no serious or critical violation), and each page is photographed into
// test-results/console/ to be looked at.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../lib/dev-server.mjs";
import { assert, eventually, expectStatus, need, request } from "./http.mjs";
import { startReceiver } from "./receiver.mjs";
import { checkAxe, launchBrowser } from "./browser.mjs";

const SHOTS = join(ROOT, "test-results", "console");

/** Signs `email` in through a link the operator API mints; the browser context keeps the session. */
async function signIn(context, url, adminToken, email) {
  const link = expectStatus(await request(url, "POST", "/api/v1/admin/sign-in-links", { key: adminToken, body: { email } }), 201, "sign-in link");
  const page = await context.newPage();
  await page.goto(link.body.data.url);
  await page.click("[data-testid=confirm-sign-in]");
  await page.waitForURL(/\/console\/teams\//);
  const origin = new URL(link.body.data.url).origin;
  await page.close();
  return origin;
}

export async function consoleExploreChecks({ url, adminToken, createTeamWithKey, defer }) {
  mkdirSync(SHOTS, { recursive: true });
  const email = `explore-${Date.now()}@example.com`;
  const { teamId, key } = await createTeamWithKey({ name: "Explore e2e", plan: "pro", ownerEmail: email });
  const api = (method, path, body) => request(url, method, `/api/v1${path}`, { key, body });
  const receiver = await startReceiver();
  defer(() => receiver.close());
  const browser = await launchBrowser(defer);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // Anything the page's CSP refuses (an inline script or style, another origin) is logged by Chromium.
  const cspViolations = [];
  context.on("page", (page) =>
    page.on("console", (message) => {
      if (message.type() === "error" && /Content Security Policy/i.test(message.text())) cspViolations.push(`${page.url()}: ${message.text()}`);
    }),
  );
  const origin = await signIn(context, url, adminToken, email);
  const base = `${origin}/console/teams/${teamId}`;
  const state = {};
  const ingest = async (token, entry) => expectStatus(await request(url, "POST", "/api/v1/logs/ingest", { key: token, body: entry }), 202, "ingest");
  const shoot = (page, name) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  return {
    "console logs: the projects page, an empty project's first command": async () => {
      const page = await context.newPage();
      await page.goto(`${base}/logs`);
      await checkAxe(page, "logs (empty)");
      await shoot(page, "logs-empty");
      await page.fill("#project-name", "checkout-api");
      await page.click("[data-testid=create-project] button[type=submit]");
      const token = (await page.textContent("[data-testid=new-token]")).trim();
      assert.match(token, /^lgt_/);
      await checkAxe(page, "logs (token shown once)");
      await shoot(page, "logs-created");
      const project = await eventually(async () => (await api("GET", "/logs/projects")).body.data.find((p) => p.name === "checkout-api"));
      state.project = { id: project.id, token };
      await page.goto(`${base}/logs/${project.id}`);
      assert.equal(await page.locator("[data-testid=logs-empty]").count(), 1);
      await checkAxe(page, "logs project (empty)");
      await shoot(page, "logs-project-empty");
      await page.close();
    },

    "console logs: search, a row's metadata and the histogram": async () => {
      const project = need(state.project, "project");
      const lines = [];
      for (let i = 0; i < 40; i++)
        lines.push({
          message: `GET /cart ${200 + (i % 3)} in ${10 + i} ms`,
          level: i % 9 === 0 ? "warn" : "info",
          stream: "web",
          metadata: { route: "/cart", i },
        });
      lines.push({
        message: "payment declined for order 7781",
        level: "error",
        stream: "billing",
        service: "payments",
        trace_id: "tr-7781",
        metadata: { order: 7781, card: "visa", amount_cents: 4200 },
      });
      const res = await request(url, "POST", "/api/v1/logs/ingest/batch", {
        key: project.token,
        raw: lines.map((l) => JSON.stringify(l)).join("\n"),
        headers: { "content-type": "application/x-ndjson" },
      });
      expectStatus(res, 202, "batch ingest");
      const page = await context.newPage();
      await page.goto(`${base}/logs/${project.id}`);
      assert.equal(await page.locator("[data-testid=log-row]").count(), 41);
      assert.equal(await page.getAttribute("[data-testid=histogram]", "data-total"), "41");
      await checkAxe(page, "logs project");
      await shoot(page, "logs-project");
      await page.fill("input[name=q]", "declined");
      await page.click("form.log-search button[type=submit]");
      await page.waitForURL(/q=declined/);
      const rows = page.locator("[data-testid=log-row]");
      assert.equal(await rows.count(), 1);
      await rows.first().locator("summary").click();
      const metadata = await rows.first().locator(".log-metadata").textContent();
      assert.deepEqual(JSON.parse(metadata), { order: 7781, card: "visa", amount_cents: 4200 });
      await checkAxe(page, "logs search");
      await shoot(page, "logs-search");
      await page.close();
    },

    "console logs: the live tail shows a line ingested over HTTP without a reload": async () => {
      const project = need(state.project, "project");
      const page = await context.newPage();
      await page.goto(`${base}/logs/${project.id}?level=error`);
      const loads = [];
      page.on("load", () => loads.push(Date.now()));
      await page.click("[data-testid=tail-toggle]");
      await page.waitForFunction(() => document.querySelector("#tail-status")?.textContent?.startsWith("Live"));
      const message = `tail check ${Date.now()}`;
      await ingest(project.token, { message: "not an error", level: "info" });
      await ingest(project.token, { message, level: "error", stream: "jobs", metadata: { job: "nightly" } });
      await page.locator("[data-testid=log-row]", { hasText: message }).waitFor({ timeout: 15_000 });
      assert.equal(await page.locator("[data-testid=log-row]", { hasText: "not an error" }).count(), 0, "the level filter applies to the tail");
      assert.equal(loads.length, 0, "the page did not reload");
      // Pause holds entries back; resume shows them.
      await page.click("button[data-tail-pause]");
      const held = `held ${Date.now()}`;
      await ingest(project.token, { message: held, level: "error" });
      await page.waitForFunction(() => document.querySelector("#tail-status")?.textContent?.includes("waiting"));
      assert.equal(await page.locator("[data-testid=log-row]", { hasText: held }).count(), 0);
      await page.click("button[data-tail-pause]");
      await page.locator("[data-testid=log-row]", { hasText: held }).waitFor();
      await checkAxe(page, "logs live tail");
      await shoot(page, "logs-tail");
      await page.click("[data-testid=tail-toggle]");
      await page.close();
    },

    "console relay: a source, an event's attempts and a replay that reaches a local receiver": async () => {
      const page = await context.newPage();
      await page.goto(`${base}/relay`);
      await checkAxe(page, "relay (empty)");
      await shoot(page, "relay-empty");
      await page.fill("#source-name", "Shop orders");
      await page.click("[data-testid=create-source] button[type=submit]");
      await page.waitForURL(/\/relay\/sources\/[0-9a-f-]{36}/);
      const ingestUrl = (await page.textContent("[data-testid=ingest-url]")).trim();
      assert.match(ingestUrl, /\/in\/[A-Za-z0-9_-]{24}$/);
      await checkAxe(page, "relay source (empty)");
      await shoot(page, "relay-source-empty");
      await page.fill("#destination-url", `${receiver.url}/orders`);
      await page.fill("#destination-filter", "order.*");
      await page.click("[data-testid=create-destination] button[type=submit]");
      receiver.secret = (await page.textContent("[data-testid=new-secret]")).trim();
      assert.match(receiver.secret, /^whsec_/);
      const sourcePath = new URL(page.url()).pathname.replace(/\/destinations$/, "");

      const body = JSON.stringify({ type: "order.created", id: `o_${Date.now()}`, total: 4200 });
      const sent = await request(url, "POST", new URL(ingestUrl).pathname, { raw: body, headers: { "content-type": "application/json" } });
      expectStatus(sent, 202, "ingest");
      await receiver.waitFor((r) => r.text === body);
      await page.goto(`${origin}${sourcePath}`);
      await eventually(async () => {
        await page.reload();
        return (await page.locator("[data-testid=event-row][data-status=delivered]").count()) === 1;
      });
      await checkAxe(page, "relay source");
      await shoot(page, "relay-source");

      await page.click("[data-testid=event-row] a");
      await page.waitForURL(/\/events\//);
      assert.equal(await page.locator("[data-testid=attempt-row]").count(), 1);
      assert.equal(await page.getAttribute("[data-testid=attempt-row]", "data-status-code"), "200");
      assert.deepEqual(JSON.parse(await page.textContent("[data-testid=payload]")), JSON.parse(body));
      await checkAxe(page, "relay event");
      const before = receiver.requests.filter((r) => r.text === body).length;
      await page.check("form[data-testid=replay] input[name=destination_ids]");
      await page.click("form[data-testid=replay] button[type=submit]");
      await page.waitForURL(/notice=replayed/);
      await eventually(() => receiver.requests.filter((r) => r.text === body && r.verified).length === before + 1);
      await eventually(async () => {
        await page.reload();
        return (await page.locator("[data-testid=attempt-row]").count()) === 2;
      });
      await checkAxe(page, "relay event after replay");
      await shoot(page, "relay-event");
      await page.goto(`${base}/relay`);
      await shoot(page, "relay");
      await page.close();
    },

    "console logs and relay: no Content-Security-Policy violation on any page": async () => {
      assert.deepEqual(cspViolations, []);
    },
  };
}
