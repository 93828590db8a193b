// Browser checks of the hosted survey page and the embed widget: Debian's Chromium driven by
// playwright-core against the running `wrangler dev`. A survey with every question type and a
// branch is answered like a person would; the stored response is then read back through the API.
// Another survey checks the rating stars (outlines until chosen) and the back button (from the
// second question, answer pre-filled, a changed answer taking the other branch).
// Screenshots of each step go to test-results/ (ignored by git).
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { ROOT } from "../lib/dev-server.mjs";
import { assert, eventually, request } from "./http.mjs";
import { launchBrowser } from "./browser.mjs";

const SHOTS = join(ROOT, "test-results", "survey-page");

async function createSurvey(url, key, slug, questions) {
  const survey = await request(url, "POST", "/api/v1/surveys", {
    key,
    body: {
      name: "Product feedback",
      slug,
      settings: { theme: { primary_color: "#0b6e4f" }, button_labels: { next: "Continue", submit: "Send" }, thank_you_message: "Thanks a lot!" },
    },
  });
  assert.equal(survey.status, 201, JSON.stringify(survey.body));
  const id = survey.body.data.id;
  const ids = [];
  for (const [i, q] of questions.entries()) {
    const res = await request(url, "POST", `/api/v1/surveys/${id}/questions`, { key, body: { position: i + 1, ...q } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    ids.push(res.body.data.id);
  }
  return { id, ids };
}

export async function surveyPageChecks({ url, createTeamWithKey }) {
  const team = await createTeamWithKey({ plan: "pro" });
  const key = team.key;
  mkdirSync(SHOTS, { recursive: true });
  let browser;
  const launch = async () => (browser ??= await launchBrowser());

  const checks = {
    "hosted page: every question type and a branch, answered in Chromium": async () => {
      const { id, ids } = await createSurvey(url, key, "browser-all-types", [
        { type: "yes_no", title: "Do you use the product every week?" },
        { type: "text", title: "Why not?" },
        { type: "text", title: "What do you use it for?" },
        { type: "email", title: "Your email" },
        { type: "choice", title: "How did you hear about us?", options: ["Search", "Friend", "Ad"] },
        { type: "multi_choice", title: "Which features do you use?", options: ["Surveys", "Logs", "Push"] },
        { type: "rating", title: "Rate the product" },
        { type: "nps", title: "How likely are you to recommend us?" },
        { type: "scale", title: "How easy was set-up?", settings: { min: 1, max: 5 } },
        { type: "slider", title: "Share of your team using it (%)", settings: { min: 0, max: 100 } },
        { type: "matrix", title: "Rate each aspect", settings: { rows: ["Speed", "Price"], columns: ["Bad", "OK", "Good"] } },
        { type: "ranking", title: "Order by importance", options: ["Reliability", "Price", "Features"] },
        { type: "date", title: "When did you start?" },
      ]);
      // Branch: a "yes" skips the "Why not?" question.
      const branch = await request(url, "PATCH", `/api/v1/surveys/${id}/questions/${ids[0]}`, {
        key,
        body: { branching: { rules: [{ if: { equals: true }, then: { go_to_question_id: ids[2] } }], default: { go_to_next: true } } },
      });
      assert.equal(branch.status, 200, JSON.stringify(branch.body));
      assert.equal((await request(url, "POST", `/api/v1/surveys/${id}/activate`, { key })).status, 200);

      const page = await (await launch()).newPage({ viewport: { width: 420, height: 900 } });
      let step = 0;
      const shot = (name) => page.screenshot({ path: join(SHOTS, `${String(++step).padStart(2, "0")}-${name}.png`), fullPage: true });
      const next = async (name) => {
        await shot(name);
        const title = await page.locator("legend.title").textContent();
        await page.locator("form button[type=submit]").click();
        await page.waitForFunction((t) => !document.querySelector("legend.title") || document.querySelector("legend.title").textContent !== t, title);
      };
      await page.goto(`${url}/s/browser-all-types`);
      await shot("welcome");
      await page.getByRole("button", { name: "Start" }).click();
      await page.getByRole("button", { name: "Yes" }).click();
      await next("yes-no");
      assert.equal(await page.locator("legend.title").textContent(), "What do you use it for?");
      await page.locator("#answer").fill("Collecting feedback");
      await next("text");
      await page.locator("#answer").fill("not-an-email");
      await page.locator("form button[type=submit]").click();
      await page
        .locator(".error")
        .filter({ hasText: /valid email/ })
        .waitFor();
      await shot("email-hint");
      await page.locator("#answer").fill("ada@example.com");
      await next("email");
      await page.getByLabel("Friend").check();
      await next("choice");
      await page.getByLabel("Surveys").check();
      await page.getByLabel("Push").check();
      await next("multi-choice");
      await page.getByRole("button", { name: "4 stars" }).click();
      await next("rating");
      await page.locator(".nps-row button[data-value='9']").click();
      await next("nps");
      await page.locator(".scale-row button[data-value='2']").click();
      await next("scale");
      await page.locator("input[type=range]").evaluate((el) => {
        el.value = "70";
        el.dispatchEvent(new Event("input", { bubbles: true }));
      });
      await next("slider");
      await page.getByLabel("Speed: Good").check();
      await page.getByLabel("Price: OK").check();
      await next("matrix");
      await page.getByRole("button", { name: "Move Features up" }).click();
      await page.getByRole("button", { name: "Move Features up" }).click();
      await next("ranking");
      await page.locator("#answer").fill("2026-01-15");
      await shot("date");
      await page.locator("form button[type=submit]").click();
      await page.locator("[data-state=completed]").waitFor();
      assert.match(await page.locator(".thanks").textContent(), /Thanks a lot!/);
      await shot("thank-you");
      await page.close();

      const responses = await request(url, "GET", `/api/v1/surveys/${id}/responses`, { key });
      assert.equal(responses.status, 200);
      const [stored] = responses.body.data;
      assert.equal(stored.status, "completed");
      const value = (i) => stored.answers[ids[i]]?.value;
      assert.equal(value(0), true);
      assert.equal(value(1), undefined, "the branch skipped 'Why not?'");
      assert.equal(value(2), "Collecting feedback");
      assert.equal(value(3), "ada@example.com");
      assert.equal(value(4), "Friend");
      assert.deepEqual(value(5), ["Surveys", "Push"]);
      assert.equal(value(6), 4);
      assert.equal(value(7), 9);
      assert.equal(value(8), 2);
      assert.equal(value(9), 70);
      assert.deepEqual(value(10), { Speed: "Good", Price: "OK" });
      assert.deepEqual(value(11), ["Features", "Reliability", "Price"]);
      assert.equal(value(12), "2026-01-15");
      const survey = await request(url, "GET", `/api/v1/surveys/${id}`, { key });
      assert.equal(survey.body.data.response_count, 1);
    },

    "embed widget on a local test page completes a response and emits its event": async () => {
      const { id } = await createSurvey(url, key, "browser-embed", [{ type: "rating", title: "How was your day?" }]);
      assert.equal((await request(url, "POST", `/api/v1/surveys/${id}/activate`, { key })).status, 200);
      const host = createServer((req, res) => {
        res.writeHead(200, { "content-type": "text/html" });
        res.end(`<!doctype html><html><body><h1>Customer site</h1>
<script>window.__events = []; window.addEventListener("edge-survey:completed", function (e) { window.__events.push(e.detail); });
window.addEventListener("message", function (e) { if (e.data && e.data.type === "response.completed") window.__messages = (window.__messages || 0) + 1; });</script>
<script src="${url}/embed.js" data-survey="browser-embed" async></script></body></html>`);
      });
      await new Promise((r) => host.listen(0, "127.0.0.1", r));
      try {
        const page = await (await launch()).newPage();
        await page.goto(`http://127.0.0.1:${host.address().port}/`);
        const frame = page.frameLocator("iframe[title=Survey]");
        await frame.getByRole("button", { name: "Start" }).click();
        await frame.getByRole("button", { name: "5 stars" }).click();
        await page.screenshot({ path: join(SHOTS, "embed-question.png"), fullPage: true });
        await frame.locator("form button[type=submit]").click();
        await frame.locator("[data-state=completed]").waitFor();
        const events = await eventually(() => page.evaluate(() => (window.__events.length ? window.__events : null)));
        assert.equal(events[0].slug, "browser-embed");
        assert.ok(events[0].response_id);
        assert.equal(await page.evaluate(() => window.__messages), 1);
        const height = await page.locator("iframe[title=Survey]").evaluate((el) => el.style.height);
        assert.match(height, /px$/);
        await page.screenshot({ path: join(SHOTS, "embed-done.png"), fullPage: true });
        const survey = await request(url, "GET", `/api/v1/surveys/${id}`, { key });
        assert.equal(survey.body.data.response_count, 1);
      } finally {
        host.close();
      }
    },

    "hosted page: stars unselected until chosen, back button from the second question with the answer pre-filled": async () => {
      const slug = "browser-back";
      const survey = await request(url, "POST", "/api/v1/surveys", {
        key,
        body: { name: "Back and stars", slug, settings: { button_labels: { back: "Previous", next: "Continue" } } },
      });
      assert.equal(survey.status, 201, JSON.stringify(survey.body));
      const id = survey.body.data.id;
      const add = async (body) => {
        const res = await request(url, "POST", `/api/v1/surveys/${id}/questions`, { key, body });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body.data.id;
      };
      const comeBack = await add({ type: "yes_no", title: "Would you come back?", position: 3 });
      const wrong = await add({ type: "text", title: "What went wrong?", position: 2 });
      const rating = await add({
        type: "rating",
        title: "Rate your visit",
        position: 1,
        // Below 3 stars asks what went wrong; otherwise straight to the last question.
        branching: { rules: [{ if: { less_than: 3 }, then: { go_to_question_id: wrong } }], default: { go_to_question_id: comeBack } },
      });
      assert.equal((await request(url, "POST", `/api/v1/surveys/${id}/activate`, { key })).status, 200);

      const page = await (await launch()).newPage({ viewport: { width: 420, height: 700 } });
      const shot = (name) => page.screenshot({ path: join(SHOTS, `back-${name}.png`), fullPage: true });
      const title = () => page.locator("legend.title").textContent();
      const stars = () =>
        page.locator(".star-row button").evaluateAll((buttons) =>
          buttons.map((b) => ({
            pressed: b.getAttribute("aria-pressed"),
            lit: b.classList.contains("lit"),
            fill: getComputedStyle(b.querySelector("svg")).fill,
          })),
        );
      await page.goto(`${url}/s/${slug}`);
      await page.getByRole("button", { name: "Start" }).click();
      await page.locator("legend.title").filter({ hasText: "Rate your visit" }).waitFor();
      const before = await stars();
      assert.equal(before.length, 5);
      for (const star of before) {
        assert.equal(star.pressed, "false");
        assert.equal(star.lit, false);
        assert.equal(star.fill, "none", "an unchosen star is an outline");
      }
      assert.equal(await page.getByRole("button", { name: "Previous" }).count(), 0, "no back on the first question");
      await shot("01-stars-unselected");
      await page.getByRole("button", { name: "2 stars" }).click();
      const chosen = await stars();
      assert.deepEqual(
        chosen.map((s) => s.lit),
        [true, true, false, false, false],
      );
      assert.deepEqual(
        chosen.map((s) => s.pressed),
        ["false", "true", "false", "false", "false"],
      );
      assert.equal(chosen[2].fill, "none");
      assert.notEqual(chosen[0].fill, "none");
      await shot("02-two-stars");
      await page.locator("form button[type=submit]").click();
      await page.locator("legend.title").filter({ hasText: "What went wrong?" }).waitFor();
      await page.locator("#answer").fill("Too slow");
      await shot("03-branch-low-with-back");
      await page.getByRole("button", { name: "Previous" }).click();
      await page.locator("legend.title").filter({ hasText: "Rate your visit" }).waitFor();
      // The earlier answer is pre-filled: two stars, the second pressed.
      assert.deepEqual(
        (await stars()).map((s) => s.lit),
        [true, true, false, false, false],
      );
      assert.equal(await page.getByRole("button", { name: "Previous" }).count(), 0);
      await shot("04-back-prefilled");
      await page.getByRole("button", { name: "5 stars" }).click();
      await page.locator("form button[type=submit]").click();
      await page.locator("legend.title").filter({ hasText: "Would you come back?" }).waitFor();
      assert.equal(await title(), "Would you come back?", "a high rating skips the low-score question");
      assert.equal(await page.getByRole("button", { name: "Previous" }).count(), 1);
      await page.getByRole("button", { name: "Yes" }).click();
      await shot("05-branch-high");
      await page.locator("form button[type=submit]").click();
      await page.locator("[data-state=completed]").waitFor();
      await shot("06-done");
      await page.close();

      const responses = await request(url, "GET", `/api/v1/surveys/${id}/responses`, { key });
      const [stored] = responses.body.data;
      assert.equal(stored.status, "completed");
      assert.deepEqual(stored.path, [rating, comeBack]);
      assert.equal(stored.answers[rating].value, 5);
      assert.equal(stored.answers[wrong], undefined, "the answer off the new path was discarded");
      assert.equal(stored.answers[comeBack].value, true);
    },

    "closed and unknown surveys show a clear page": async () => {
      const { id } = await createSurvey(url, key, "browser-closed", [{ type: "text", title: "Anything?" }]);
      await request(url, "POST", `/api/v1/surveys/${id}/activate`, { key });
      await request(url, "POST", `/api/v1/surveys/${id}/close`, { key });
      const page = await (await launch()).newPage();
      const closed = await page.goto(`${url}/s/browser-closed`);
      assert.equal(closed.status(), 410);
      assert.match(await page.locator("[data-state=notice]").textContent(), /closed/);
      await page.screenshot({ path: join(SHOTS, "closed.png") });
      const unknown = await page.goto(`${url}/s/no-such-survey`);
      assert.equal(unknown.status(), 404);
      assert.match(await page.locator("[data-state=notice]").textContent(), /not found/i);
      await page.close();
    },
  };

  // The browser is closed after the last check, whatever happened.
  const names = Object.keys(checks);
  const last = names[names.length - 1];
  const lastCheck = checks[last];
  checks[last] = async () => {
    try {
      await lastCheck();
    } finally {
      await browser?.close();
    }
  };
  return checks;
}
