// Browser checks of working in the console (DESIGN.md "Working in the console"): each write path
// added for it done in Chromium through its form (the survey builder and activation, a log alert,
// an audit finding), a reload after every POST finding nothing repeated (a new key's plaintext and
// a new project's token shown once, no second row), and every page of a team at 390 px: no page
// scrolls sideways (document scroll width at most 390), the navigation is a closed menu that opens,
// and axe-core finds no serious or critical violation. Screenshots go to test-results/console/
// (files named work-*).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../lib/dev-server.mjs";
import { assert, expectStatus, need, request } from "./http.mjs";
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
