// Browser checks of the console's product pages (surveys, mail, push, audit): Debian's Chromium
// driven by playwright-core against the running `wrangler dev`, at APP_URL's origin, signed in
// through operator sign-in links (POST /api/v1/admin/sign-in-links, as support would). Real data
// comes from the public API and the queues of wrangler dev: a survey's counts and CSV after real
// responses, a sending domain's records verified against the local DNS-over-HTTPS resolver, an
// email's sandboxed preview, a mail webhook test reaching a local receiver, an audit export
// downloaded and shared. Every page is checked with axe-core (no serious or critical violation)
// and screenshotted into test-results/console/ (files named products-*); a Content-Security-Policy
// violation reported by the browser fails the run.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { ROOT } from "../lib/dev-server.mjs";
import { assert, eventually, expectStatus, need, request } from "./http.mjs";
import { startReceiver } from "./receiver.mjs";
import { checkAxe, launchBrowser } from "./browser.mjs";

const SHOTS = join(ROOT, "test-results", "console");

export async function consoleProductsChecks({ url, adminToken, dns, createTeamWithKey, defer }) {
  const port = new URL(url).port;
  // The browser uses APP_URL's origin: the Origin rule refuses forms posted from any other.
  const app = `http://localhost:${port}`;
  mkdirSync(SHOTS, { recursive: true });
  const browser = await launchBrowser(defer);
  const receiver = await startReceiver();
  defer(() => receiver.close());

  const cspViolations = [];
  // What the email preview's own CSP blocked: the point of it (a tracking pixel never loads).
  const previewBlocked = [];
  const audited = [];

  /** A browser context signed in as `email` through an operator sign-in link. */
  const signedIn = async (email) => {
    const minted = expectStatus(await request(url, "POST", "/api/v1/admin/sign-in-links", { key: adminToken, body: { email } }), 201, "sign-in link");
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    page.on("console", (message) => {
      const text = message.text();
      if (!/Content Security Policy|Refused to (load|execute|apply|frame)/i.test(text)) return;
      if (text.includes('"img-src data:"')) previewBlocked.push(text);
      else cspViolations.push(`${page.url()}: ${text}`);
    });
    await page.goto(minted.body.data.url.replace(/^http:\/\/[^/]+/, app));
    await page.click("[data-testid=confirm-sign-in]");
    await page.waitForURL(/\/console\/teams\/[0-9a-f-]{36}\/keys$/);
    return page;
  };

  /** A full-page screenshot, then axe-core on the page as it is. */
  const check = async (page, name) => {
    await page.screenshot({ path: join(SHOTS, `products-${String(audited.length + 1).padStart(2, "0")}-${name}.png`), fullPage: true });
    audited.push(name);
    await checkAxe(page, name);
  };

  const stamp = Date.now();
  const ownerEmail = `owner-${stamp}@example.com`;
  const viewerEmail = `viewer-${stamp}@example.com`;
  const team = await createTeamWithKey({ name: "Northwind", ownerEmail, domains: [] });
  expectStatus(
    await request(url, "POST", `/api/v1/admin/teams/${team.teamId}/members`, { key: adminToken, body: { email: viewerEmail, role: "viewer" } }),
    201,
    "viewer membership",
  );
  const key = team.key;
  const at = (path) => `${app}/console/teams/${team.teamId}/${path}`;
  const state = {};
  let owner;

  return {
    "console products: empty pages teach with the team's real curl commands": async () => {
      owner = await signedIn(ownerEmail);
      await owner.goto(at("surveys"));
      assert.match(await owner.locator("#create-survey-curl").textContent(), new RegExp(`curl -X POST ${app}/api/v1/surveys`));
      await check(owner, "surveys-empty");
      await owner.goto(at("mail"));
      assert.equal(await owner.locator("[data-testid=domain-row]").count(), 0);
      await check(owner, "mail-empty");
      await owner.goto(at("push"));
      await check(owner, "push-empty");
      await owner.goto(at("audit"));
      assert.match(await owner.locator("#create-finding-curl").textContent(), new RegExp(`/api/v1/orgs/${team.teamId}/projects/my-app/audit/findings`));
      await check(owner, "audit-empty");
    },

    "console products: a survey's counts, charts and CSV after real responses": async () => {
      need(owner, "the signed-in owner");
      const survey = expectStatus(
        await request(url, "POST", "/api/v1/surveys", { key, body: { name: "Product feedback", slug: `feedback-${stamp}` } }),
        201,
        "survey",
      ).body.data;
      const questions = [];
      for (const [i, q] of [
        { type: "nps", title: "How likely are you to recommend Northwind?" },
        { type: "choice", title: "Which plan are you on?", options: ["Free", "Team", "Enterprise"] },
        { type: "rating", title: "How would you rate the docs?" },
        { type: "text", title: "What should we build next?" },
      ].entries()) {
        questions.push(
          expectStatus(await request(url, "POST", `/api/v1/surveys/${survey.id}/questions`, { key, body: { ...q, position: i + 1 } }), 201, "question").body
            .data,
        );
      }
      expectStatus(await request(url, "POST", `/api/v1/surveys/${survey.id}/activate`, { key }), 200, "activate");
      const answers = [
        [10, "Team", 5, "A dark mode, please"],
        [9, "Enterprise", 4, "SSO"],
        [7, "Free", 3, '=HYPERLINK("http://evil.example")'],
        [8, "Team", 4, "Faster exports, with CSV"],
        [3, "Free", 2, "Better docs"],
      ];
      for (const [i, values] of answers.entries()) {
        const ip = `198.51.100.${i + 10}`;
        const started = expectStatus(
          await request(url, "POST", `/api/v1/surveys/${survey.slug}/responses`, { headers: { "cf-connecting-ip": ip } }),
          201,
          "start",
        ).body.data;
        for (const [j, q] of questions.entries()) {
          expectStatus(
            await request(url, "POST", `/api/v1/surveys/${survey.slug}/responses/${started.id}/answers`, {
              body: { question_id: q.id, value: values[j] },
              headers: { "cf-connecting-ip": ip },
            }),
            200,
            "answer",
          );
        }
        expectStatus(
          await request(url, "POST", `/api/v1/surveys/${survey.slug}/responses/${started.id}/complete`, { headers: { "cf-connecting-ip": ip } }),
          200,
          "complete",
        );
      }
      // One respondent who stopped half-way: counted in progress, never exported.
      const unfinished = expectStatus(
        await request(url, "POST", `/api/v1/surveys/${survey.slug}/responses`, { headers: { "cf-connecting-ip": "198.51.100.99" } }),
        201,
        "start",
      ).body.data;
      expectStatus(
        await request(url, "POST", `/api/v1/surveys/${survey.slug}/responses/${unfinished.id}/answers`, {
          body: { question_id: questions[0].id, value: 7 },
          headers: { "cf-connecting-ip": "198.51.100.99" },
        }),
        200,
        "answer",
      );

      await owner.goto(at("surveys"));
      assert.equal(await owner.locator("[data-testid=survey-row]").count(), 1);
      await check(owner, "surveys-list");
      await owner.click(`a:has-text("Product feedback")`);
      await owner.waitForSelector("[data-testid=response-count]");
      assert.equal(await owner.locator("[data-testid=response-count]").getAttribute("data-count"), "5");
      assert.equal((await owner.locator("[data-testid=nps-score]").textContent()).trim(), "20");
      assert.equal((await owner.locator("[data-testid=question-summary] svg.chart").count()) >= 4, true);
      assert.equal(await owner.locator("[data-testid=response-row]").count(), 6);
      assert.equal(await owner.locator("[data-testid=hosted-link]").getAttribute("href"), `${app}/s/${survey.slug}`);
      assert.equal(await owner.locator("button[data-copy='#embed-snippet']").isVisible(), true, "copy buttons shown by the bundled script");
      await check(owner, "survey-results");

      const href = await owner.locator("a[data-testid=export-csv]").getAttribute("href");
      const download = await owner.context().request.get(`${app}${href}`);
      assert.equal(download.status(), 200);
      assert.equal(download.headers()["content-type"], "text/csv; charset=utf-8");
      const rows = parse(await download.text());
      assert.equal(rows.length, 6, "a header and one row per completed response");
      assert.deepEqual(
        rows[0].slice(3),
        questions.map((q) => q.title),
      );
      assert.deepEqual(
        rows
          .slice(1)
          .map((r) => r[6])
          .sort(),
        ['\'=HYPERLINK("http://evil.example")', "A dark mode, please", "Better docs", "Faster exports, with CSV", "SSO"],
      );
      // The API answers the same file.
      const api = await fetch(`${url}/api/v1/surveys/${survey.id}/responses/export`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(await api.text(), await download.text());
      state.survey = survey;
    },

    "console products: a sending domain's records, verified against the DNS resolver": async () => {
      need(owner, "the signed-in owner");
      await owner.goto(at("mail"));
      await owner.fill("form[data-testid=add-domain] input[name=name]", "mail.northwind.example");
      await owner.click("form[data-testid=add-domain] button[type=submit]");
      await owner.waitForURL(/notice=domain-added/);
      const row = owner.locator("[data-testid=domain-row]");
      assert.equal(await row.getAttribute("data-status"), "pending");
      const name = (await row.locator("code[id^=rec-name-]").textContent()).trim();
      const value = (await row.locator("code[id^=rec-value-]").textContent()).trim();
      assert.equal(name, "_edge-platform.mail.northwind.example");
      assert.match(value, /^edp-verify=[0-9a-f]{32}$/);
      await check(owner, "mail-domain-pending");

      dns.records.set(name, ["v=spf1 include:_spf.example.net ~all"]);
      await owner.click("form[data-testid=verify-domain] button");
      await owner.waitForSelector("[data-testid=dns-answer]");
      assert.match(await owner.locator("[data-testid=dns-answer]").textContent(), /v=spf1 include:_spf\.example\.net ~all/);
      await check(owner, "mail-domain-dns-answer");

      dns.records.set(name, ["v=spf1 include:_spf.example.net ~all", value]);
      await owner.click("form[data-testid=verify-domain] button");
      await owner.waitForSelector("[data-testid=domain-row][data-status=verified]");
      const sent = expectStatus(
        await request(url, "POST", "/api/v1/emails", {
          key,
          body: {
            from: "Northwind <hello@mail.northwind.example>",
            to: "ada@example.com",
            subject: "Your receipt",
            stream: "transactional",
            html: '<h1>Thanks, Ada!</h1><p>Your order is on its way.</p><script>document.title=\'pwned\'</script><img src="https://tracker.example/open.gif" alt="">',
          },
        }),
        201,
        "send from the verified domain",
      ).body.data;
      state.emailId = sent.id;
    },

    "console products: recent emails, an email's history and its sandboxed preview": async () => {
      need(owner, "the signed-in owner");
      const emailId = need(state.emailId, "the sent email");
      await owner.goto(at("mail"));
      await eventually(async () => {
        await owner.reload();
        return (await owner.locator("[data-testid=email-row]").getAttribute("data-status")) === "delivered";
      });
      await owner.click(`a:has-text("Your receipt")`);
      await owner.waitForSelector("[data-testid=email-history]");
      assert.equal(await owner.locator("iframe[data-testid=email-preview]").getAttribute("sandbox"), "");
      const frame = await (await owner.locator("iframe[data-testid=email-preview]").elementHandle()).contentFrame();
      await frame.waitForSelector("h1");
      assert.equal(await frame.locator("h1").textContent(), "Thanks, Ada!");
      assert.notEqual(await frame.evaluate(() => document.title).catch(() => "blocked"), "pwned");
      await eventually(() => previewBlocked.some((t) => t.includes("https://tracker.example/open.gif")));
      const preview = await owner.context().request.get(at(`mail/emails/${emailId}/preview`));
      assert.match(preview.headers()["content-security-policy"], /default-src 'none'.*sandbox/);
      await check(owner, "mail-email");
    },

    "console products: a mail webhook's test reaches a local receiver": async () => {
      need(owner, "the signed-in owner");
      await owner.goto(at("mail"));
      await owner.fill("form[data-testid=create-webhook] input[name=url]", `${receiver.url}/mail-events`);
      await owner.click("form[data-testid=create-webhook] button[type=submit]");
      assert.match(await owner.locator("#new-webhook-secret").textContent(), /^whsec_/);
      await owner.goto(at("mail"));
      assert.equal(await owner.locator("#new-webhook-secret").count(), 0, "the secret is shown once");
      await owner.click("form[data-testid=test-webhook] button");
      await owner.waitForSelector("[data-testid=webhook-test-result]");
      assert.match(await owner.locator("[data-testid=webhook-test-result]").textContent(), /Delivered: the endpoint answered HTTP 200/);
      const received = await receiver.waitFor((r) => r.path === "/mail-events");
      assert.equal(JSON.parse(received.text).type, "email.test");
      await check(owner, "mail-webhook-tested");
    },

    "console products: a push app with its public key": async () => {
      need(owner, "the signed-in owner");
      await owner.goto(at("push"));
      await owner.fill("form[data-testid=create-push-app] input[name=name]", "Northwind web");
      await owner.click("form[data-testid=create-push-app] button[type=submit]");
      await owner.waitForURL(/notice=created/);
      const publicKey = (await owner.locator("#vapid-public-key").textContent()).trim();
      assert.match(publicKey, /^[A-Za-z0-9_-]{87}$/);
      assert.equal(await owner.locator("[data-testid=subscriber-count]").getAttribute("data-count"), "0");
      await check(owner, "push-app");
      await owner.goto(at("push"));
      await check(owner, "push-list");
    },

    "console products: an audit export downloaded, shared and revoked": async () => {
      need(owner, "the signed-in owner");
      const base = `/api/v1/orgs/${team.teamId}/projects/storefront/audit`;
      for (const body of [
        { title: "Session cookie without Secure", priority_score: 70 },
        { title: "Verbose error pages", priority_score: 30 },
      ]) {
        expectStatus(await request(url, "POST", `${base}/findings`, { key, body }), 201, "finding");
      }
      await owner.goto(at("audit"));
      await check(owner, "audit-projects");
      await owner.click("a:has-text('storefront')");
      assert.equal((await owner.locator("[data-testid=open-findings]").textContent()).trim(), "2");
      await owner.click("form[data-testid=export-report] button[value=pdf]");
      await owner.waitForURL(/notice=export-queued/);
      await eventually(async () => {
        await owner.reload();
        return (await owner.locator("[data-testid=report-row]").first().getAttribute("data-status")) === "exported";
      });
      const href = await owner.locator("[data-testid=download-report]").first().getAttribute("href");
      const file = await owner.context().request.get(`${app}${href}`);
      assert.equal(file.status(), 200);
      assert.match(file.headers()["content-disposition"], /^attachment; filename="audit-report-storefront-/);
      await owner.click("[data-testid=share-report]");
      const shareUrl = (await owner.locator("#share-url").textContent()).trim();
      assert.match(shareUrl, /\/insights\/audit\/reports\/shared\//);
      assert.equal((await fetch(shareUrl.replace(/^http:\/\/[^/]+/, url))).status, 200);
      await check(owner, "audit-shared");
      await owner.click("[data-testid=revoke-shares]");
      await owner.waitForURL(/notice=revoked/);
      assert.notEqual((await fetch(shareUrl.replace(/^http:\/\/[^/]+/, url))).status, 200);
      await check(owner, "audit-project");
    },

    "console products: a viewer reads every page without a write button": async () => {
      const viewer = await signedIn(viewerEmail);
      for (const [path, name] of [
        [`surveys/${need(state.survey, "the survey").id}`, "survey-as-viewer"],
        ["mail", "mail-as-viewer"],
        ["push", "push-as-viewer"],
        ["audit/projects/storefront", "audit-as-viewer"],
      ]) {
        await viewer.goto(at(path));
        assert.equal(await viewer.locator(`form[method=post][action^="/console/teams/"]`).count(), 0, `${path}: no write form`);
        await check(viewer, name);
      }
      assert.equal(await viewer.locator("#share-url").count(), 0);
      await viewer.close();
    },

    "console products: no Content-Security-Policy violation on any page": async () => {
      assert.deepEqual(cspViolations, []);
      assert.ok(audited.length >= 18, `pages audited: ${audited.join(", ")}`);
    },
  };
}
