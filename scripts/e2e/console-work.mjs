// Browser checks of working in the console (DESIGN.md "Working in the console"): each write path
// added for it done in Chromium through its form (the survey builder and activation, a log alert,
// an audit finding), a reload after every POST finding nothing repeated (a new key's plaintext and
// a new project's token shown once, no second row), and every page of a team at 390 px: no page
// scrolls sideways (document scroll width at most 390), the navigation is a closed menu that opens,
// and axe-core finds no serious or critical violation. Then the settings forms (a relay source and
// destination edited and deleted, a log project deleted after typing its name, a push app's
// settings and deletion, a survey's settings, section, webhook, duplicate and deletion), each
// reloaded after its POST with nothing repeated, and a relay replay whose attempt appears without
// a reload (the live part polled by client/live.ts). Screenshots go to test-results/console/
// (files named work-*).
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { ROOT } from "../lib/dev-server.mjs";
import { assert, eventually, expectStatus, need, request } from "./http.mjs";
import { checkAxe, launchBrowser } from "./browser.mjs";

const SHOTS = join(ROOT, "test-results", "console");

export async function consoleWorkChecks({ url, adminToken, createTeamWithKey, defer }) {
  const app = `http://localhost:${new URL(url).port}`;
  mkdirSync(SHOTS, { recursive: true });
  const browser = await launchBrowser(defer);
  const stamp = Date.now();
  const ownerEmail = `worker-${stamp}@example.com`;
  const team = await createTeamWithKey({ name: "Worktown", ownerEmail, domains: [] });
  const at = (path) => `${app}/console/teams/${team.teamId}/${path}`;
  const api = async (method, path, body) => request(url, method, `/api/v1/${path}`, { key: team.key, body });
  let page;
  let shot = 0;

  /** Reloads the page (a browser reload of the address the POST's 303 led to) and returns its HTML. */
  const reload = async () => {
    await page.reload();
    return page.content();
  };

  /** Screenshots of the page at 1280 and 390 px, each checked for sideways scroll and by axe. */
  const snap = async (name) => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await page.screenshot({ path: join(SHOTS, `work-${String(++shot).padStart(2, "0")}-${width}-${name}.png`), fullPage: true });
      const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(scroll <= width, `${name} at ${width} px scrolls sideways (${scroll})`);
      await checkAxe(page, `${name} at ${width} px`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  };

  return {
    "console work: a new key and a new project's token are shown once; a reload shows them no more and makes nothing": async () => {
      const minted = expectStatus(await request(url, "POST", "/api/v1/admin/sign-in-links", { key: adminToken, body: { email: ownerEmail } }), 201, "link");
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      page = await context.newPage();
      await page.goto(minted.body.data.url.replace(/^http:\/\/[^/]+/, app));
      await page.click("[data-testid=confirm-sign-in]");
      await page.waitForURL(/\/keys$/);

      await page.fill("form[data-testid=create-key] input[name=name]", "Reloaded");
      await page.check("form[data-testid=create-key] input[name=scopes][value='logs:read']");
      await page.click("form[data-testid=create-key] button:has-text('Create key')");
      await page.waitForURL(/\/keys\?notice=created$/);
      const key = (await page.locator("[data-testid=new-key]").textContent()).trim();
      assert.match(key, /^edp_/);
      const html = await reload();
      assert.ok(!html.includes(key), "the key's plaintext after a reload");
      assert.equal(await page.locator("[data-testid=new-key]").count(), 0);
      assert.equal(await page.locator("[data-testid=key-row]:has-text('Reloaded')").count(), 1, "one key made");

      await page.goto(at("logs"));
      await page.fill("form[data-testid=create-project] input[name=name]", `work-${stamp}`);
      await page.click("form[data-testid=create-project] button[type=submit]");
      await page.waitForURL(/\/logs\/[0-9a-f-]{36}\?notice=created$/);
      const token = (await page.locator("[data-testid=new-token]").textContent()).trim();
      assert.ok(!(await reload()).includes(token), "the token after a reload");
      assert.equal((await api("GET", "logs/projects")).body.data.length, 1, "one project made");
    },

    "console work: a log alert created, tested and reloaded, in the browser": async () => {
      need(page, "the signed-in page");
      const project = (await api("GET", "logs/projects")).body.data[0];
      await page.goto(at(`logs/${project.id}`));
      const form = page.locator("form[data-testid=create-alert]");
      await form.locator("input[name=name]").fill("Checkout errors");
      await form.locator("select[name=level]").selectOption("error");
      await form.locator("input[name=threshold]").fill("3");
      await form.locator("input[name=window_minutes]").fill("5");
      await form.locator("input[name=notify_email]").fill(ownerEmail);
      await form.locator("button[type=submit]").click();
      await page.waitForURL(/\?notice=alert-created$/);
      assert.equal(await page.locator("[data-testid=alert-row]").count(), 1);
      await reload();
      assert.equal(await page.locator("[data-testid=alert-row]").count(), 1, "a reload adds no alert");
      await page.click("form[data-testid=test-alert] button");
      await page.waitForURL(/\?notice=alert-tested$/);
      assert.match(await page.locator("[data-testid=alert-test-result]").textContent(), /0 error entries in the last 5 minutes, under the threshold of 3/);
      await reload();
      assert.equal(await page.locator("[data-testid=alert-test-result]").count(), 0, "the test's verdict is shown once");
      assert.equal((await api("GET", `logs/projects/${project.id}/alerts`)).body.data.length, 1);
    },

    "console work: a survey built and activated in the browser runs as built": async () => {
      need(page, "the signed-in page");
      await page.goto(at("surveys"));
      await page.fill("form[data-testid=create-survey] input[name=name]", "Built in the browser");
      await page.click("form[data-testid=create-survey] button[type=submit]");
      await page.waitForURL(/\/surveys\/[0-9a-f-]{36}\?notice=created$/);
      const surveyId = new URL(page.url()).pathname.split("/").pop();
      for (const q of [
        { type: "nps", title: "How likely are you to recommend us?" },
        { type: "choice", title: "Which plan?", options: "Free\nPro" },
      ]) {
        const form = page.locator("form[data-testid=add-question]");
        await form.locator("select[name=type]").selectOption(q.type);
        await form.locator("input[name=title]").fill(q.title);
        if (q.options) await form.locator("textarea[name=options]").fill(q.options);
        await form.locator("button[type=submit]").click();
        await page.waitForURL(/\?notice=question-added$/);
      }
      assert.equal(await page.locator("[data-testid=question-row]").count(), 2);
      await reload();
      assert.equal(await page.locator("[data-testid=question-row]").count(), 2, "a reload adds no question");
      await page.click("form[data-testid=activate-survey] button");
      await page.waitForURL(/\?notice=activated$/);
      await reload();
      const survey = (await api("GET", `surveys/${surveyId}`)).body.data;
      assert.equal(survey.status, "active");
      assert.deepEqual(
        survey.questions.map((q) => [q.type, q.title, q.options]),
        [
          ["nps", "How likely are you to recommend us?", []],
          ["choice", "Which plan?", ["Free", "Pro"]],
        ],
      );
      expectStatus(
        await request(url, "POST", `/api/v1/surveys/${survey.slug}/responses`, { headers: { "cf-connecting-ip": "198.51.100.201" } }),
        201,
        "a respondent starts the built survey",
      );
    },

    "console work: an audit finding recorded from the empty page, changed, and reloaded": async () => {
      need(page, "the signed-in page");
      await page.goto(at("audit"));
      const first = page.locator("form[data-testid=create-finding]");
      await first.locator("input[name=project_id]").fill("storefront");
      await first.locator("input[name=title]").fill("Missing rate limit on login");
      await first.locator("input[name=priority_score]").fill("40");
      await first.locator("button[type=submit]").click();
      await page.waitForURL(/\/audit\/projects\/storefront\?notice=finding-created$/);
      assert.equal(await page.locator("[data-testid=finding-row]").count(), 1);
      await reload();
      assert.equal(await page.locator("[data-testid=finding-row]").count(), 1, "a reload records no second finding");
      await page.locator("[data-testid=finding-row] summary").first().click();
      await page.locator("form[data-testid=update-finding] select[name=status]").selectOption("resolved");
      await page.locator("form[data-testid=update-finding] button[type=submit]").click();
      await page.waitForURL(/\?notice=finding-saved$/);
      assert.equal(await page.locator("[data-testid=finding-row][data-status=resolved]").count(), 1);
    },

    "console work: settings forms in the browser: each POST reloaded repeats nothing, each page fits 390 px and passes axe": async () => {
      need(page, "the signed-in page");
      await page.setViewportSize({ width: 1280, height: 900 });
      /** Submits `form`, waits for the redirect's notice, reloads, and returns the page's HTML after the reload. */
      const submit = async (form, notice) => {
        await form.locator("button[type=submit]").first().click();
        await page.waitForURL(new RegExp(`notice=${notice}$`));
        return reload();
      };

      // A relay source: settings saved, then a destination edited and deleted, then the source deleted.
      const source = expectStatus(await api("POST", "webhooks/sources", { name: "Work source", provider: "generic" }), 201, "source").body.data;
      const destination = expectStatus(await api("POST", `webhooks/sources/${source.id}/destinations`, { url: "https://hooks.example.com/a" }), 201, "dest")
        .body.data;
      await page.goto(at(`relay/sources/${source.id}`));
      await page.click("[data-testid=source-settings]");
      await snap("relay-source-settings");
      const settings = page.locator("form[data-testid=source-settings-form]");
      await settings.locator("input[name=name]").fill("Work source (live)");
      await settings.locator("input[name=retention_days]").fill("14");
      await submit(settings, "saved");
      const saved = (await api("GET", `webhooks/sources/${source.id}`)).body.data;
      assert.equal(saved.name, "Work source (live)");
      assert.equal(saved.retention_days, 14);
      await reload();
      assert.equal((await api("GET", `webhooks/sources/${source.id}`)).body.data.updated_at, saved.updated_at, "a reload saves nothing again");

      await page.goto(at(`relay/sources/${source.id}/destinations/${destination.id}`));
      await snap("relay-destination");
      const edit = page.locator("form[data-testid=edit-destination]");
      await edit.locator("input[name=event_filter]").fill("invoice.*");
      await submit(edit, "destination-saved");
      assert.deepEqual((await api("GET", `webhooks/sources/${source.id}/destinations`)).body.data[0].event_filter, ["invoice.*"]);
      await page.goto(at(`relay/sources/${source.id}/destinations/${destination.id}`));
      await page.locator("form[data-testid=delete-destination] button").click();
      await page.click("[data-testid=confirm-delete-destination]");
      await page.waitForURL(/notice=destination-deleted$/);
      await reload();
      assert.equal((await api("GET", `webhooks/sources/${source.id}/destinations`)).body.data.length, 0);

      await page.goto(at(`relay/sources/${source.id}/settings`));
      await page.click("[data-testid=delete-source]");
      await snap("relay-delete-source");
      await page.fill("input[name=confirm_name]", "Work source (live)");
      await page.click("[data-testid=confirm-delete-source]");
      await page.waitForURL(/\/relay\?notice=deleted$/);
      await reload();
      expectStatus(await api("GET", `webhooks/sources/${source.id}`), 404, "the source is gone");

      // A log project deleted after typing its name.
      const project = expectStatus(await api("POST", "logs/projects", { name: `gone-${stamp}` }), 201, "project").body.data;
      await page.goto(at(`logs/${project.id}`));
      await page.click("[data-testid=delete-project]");
      await page.fill("input[name=confirm_name]", `gone-${stamp}`);
      await page.click("[data-testid=confirm-delete-project]");
      await page.waitForURL(/\/logs\?notice=deleted$/);
      await reload();
      expectStatus(await api("GET", `logs/projects/${project.id}`), 404, "the project is gone");

      // A push app: settings saved, then deleted.
      const pushApp = expectStatus(await api("POST", "push/apps", { name: "Work app" }), 201, "app").body.data;
      await page.goto(at(`push/apps/${pushApp.id}`));
      await page.click("[data-testid=push-app-settings]");
      await snap("push-settings");
      const pushForm = page.locator("form[data-testid=push-settings]");
      await pushForm.locator("input[name=default_ttl]").fill("3600");
      await pushForm.locator("select[name=default_urgency]").selectOption("high");
      await submit(pushForm, "saved");
      assert.deepEqual((await api("GET", `push/apps/${pushApp.id}`)).body.data.settings, { default_ttl: 3600, default_urgency: "high" });
      await page.goto(at(`push/apps/${pushApp.id}/delete`));
      await page.fill("input[name=confirm_name]", "Work app");
      await page.click("[data-testid=confirm-delete-push-app]");
      await page.waitForURL(/\/push\?notice=deleted$/);
      await reload();
      expectStatus(await api("GET", `push/apps/${pushApp.id}`), 404, "the app is gone");

      // A survey: settings, a section, a webhook (secret once), duplicated, then deleted.
      const survey = expectStatus(await api("POST", "surveys", { name: "Work survey", slug: `work-${stamp}` }), 201, "survey").body.data;
      await page.goto(at(`surveys/${survey.id}`));
      await page.click("[data-testid=survey-settings-link]");
      const surveyForm = page.locator("form[data-testid=survey-settings]");
      await surveyForm.locator("input[name=thank_you_message]").fill("Thank you!");
      await submit(surveyForm, "saved");
      assert.equal((await api("GET", `surveys/${survey.id}`)).body.data.settings.thank_you_message, "Thank you!");
      const sectionForm = page.locator("form[data-testid=add-section]");
      await sectionForm.locator("input[name=title]").fill("About you");
      await submit(sectionForm, "section-added");
      assert.equal(await page.locator("[data-testid=section-row]").count(), 1, "a reload adds no section");
      const hookForm = page.locator("form[data-testid=add-survey-webhook]");
      await hookForm.locator("input[name=url]").fill("https://hooks.example.com/survey");
      await hookForm.locator("button[type=submit]").click();
      await page.waitForURL(/notice=webhook-added$/);
      const secret = (await page.locator("[data-testid=new-webhook-secret]").textContent()).trim();
      assert.match(secret, /^whsec_/);
      await snap("survey-settings");
      assert.ok(!(await reload()).includes(secret), "the webhook's secret after a reload");
      assert.equal(await page.locator("[data-testid=survey-webhook-row]").count(), 1, "a reload adds no webhook");
      await page.locator("form[data-testid=duplicate-survey] button").click();
      await page.waitForURL(/notice=duplicated$/);
      await reload();
      assert.equal((await api("GET", "surveys")).body.data.filter((s) => s.name === "Work survey").length, 2, "one copy made");
      await page.goto(at(`surveys/${survey.id}/delete`));
      await page.fill("input[name=confirm_name]", "Work survey");
      await page.click("[data-testid=confirm-delete-survey]");
      await page.waitForURL(/\/surveys\?notice=deleted$/);
      await reload();
      expectStatus(await api("GET", `surveys/${survey.id}`), 404, "the survey is gone");
    },

    "console work: a relay replay's attempt appears without a reload": async () => {
      need(page, "the signed-in page");
      // A receiver that answers after 3 s, so the page lands while the replay's attempt is pending.
      const received = [];
      const slow = createServer((req, res) => {
        req.resume();
        received.push(req.url);
        setTimeout(() => res.writeHead(200).end("ok"), 3_000);
      });
      await new Promise((resolve) => slow.listen(0, "127.0.0.1", resolve));
      defer(() => new Promise((resolve) => slow.close(() => resolve())));
      const target = `http://127.0.0.1:${slow.address().port}/hook`;
      const source = expectStatus(await api("POST", "webhooks/sources", { name: "Live", provider: "generic" }), 201, "source").body.data;
      expectStatus(await api("POST", `webhooks/sources/${source.id}/destinations`, { url: target }), 201, "destination");
      expectStatus(await request(url, "POST", `/in/${source.slug}`, { body: { type: "live.ping", id: `evt_${stamp}` } }), 202, "ingest");
      const event = await eventually(async () => {
        const first = (await api("GET", `webhooks/sources/${source.id}/events`)).body.data[0];
        if (first?.delivery_status !== "delivered") throw new Error("not delivered yet");
        return first;
      });
      await page.goto(at(`relay/sources/${source.id}/events/${event.id}`));
      assert.equal(await page.locator("[data-testid=attempt-row]").count(), 1);
      await page.click("form[data-testid=replay] button[type=submit]");
      await page.waitForURL(/notice=replayed$/);
      await page.evaluate(() => {
        globalThis.__stillHere = true;
      });
      assert.equal(await page.locator("[data-testid=deliveries]").getAttribute("data-pending"), "true", "the replay is pending as the page lands");
      await page.waitForFunction(() => document.querySelectorAll("[data-testid=attempt-row]").length === 2, null, { timeout: 30_000 });
      assert.equal(await page.evaluate(() => globalThis.__stillHere), true, "the attempt came without a reload");
      await page.waitForFunction(() => document.querySelector("[data-testid=deliveries]")?.getAttribute("data-pending") === "false", null, { timeout: 30_000 });
      await snap("relay-event-live");
      assert.equal(received.length, 2, "one delivery on arrival, one replay");
    },

    "console work: every page at 390 px has no sideways scroll, a menu for the navigation, and no serious axe violation": async () => {
      need(page, "the signed-in page");
      await page.setViewportSize({ width: 390, height: 844 });
      const project = (await api("GET", "logs/projects")).body.data[0];
      const survey = (await api("GET", "surveys")).body.data[0];
      const pages = [
        "keys",
        "usage",
        "requests",
        "logs",
        `logs/${project.id}`,
        "relay",
        "surveys",
        `surveys/${survey.id}`,
        "mail",
        "push",
        "audit",
        "audit/projects/storefront",
        "members",
      ];
      const widths = {};
      for (const path of pages) {
        await page.goto(at(path));
        widths[path] = await page.evaluate(() => document.documentElement.scrollWidth);
        await page.screenshot({ path: join(SHOTS, `work-${String(++shot).padStart(2, "0")}-390-${path.replace(/\W+/g, "-").slice(0, 40)}.png`) });
        await checkAxe(page, `${path} at 390 px`);
      }
      assert.deepEqual(
        Object.entries(widths).filter(([, width]) => width > 390),
        [],
        "pages wider than the screen",
      );
      // The navigation is a closed menu that opens with the keyboard.
      await page.goto(at("keys"));
      assert.equal(await page.locator(".mobile-menu nav a").first().isVisible(), false, "the menu starts closed");
      await page.focus(".mobile-menu summary");
      await page.keyboard.press("Enter");
      assert.equal(await page.locator(".mobile-menu nav a:has-text('Logs')").isVisible(), true, "the menu opens with Enter");
      await page.setViewportSize({ width: 1280, height: 900 });
    },
  };
}
