// Browser checks of the console's Feature flags pages (issue 39, "Console flags"): in Chromium, a
// flag created through the list's form, switched on, its default rule made a 20/80 rollout, a rule
// added with a second condition and a rollout, a served variant's removal refused, and a client key
// made; a reload after every POST repeats nothing (versions and history counted over the API, the
// client key's plaintext shown once); the flag's insights arrive with no evaluation after the last;
// the list, a flag's page, one scheduled change's page, segments and environments pass axe-core with no serious or critical
// violation and do not scroll sideways at 390 px, every folded form open. Screenshots at 1280 and
// 390 px go to test-results/console/ (files named flags-*).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../lib/dev-server.mjs";
import { assert, eventually, expectStatus, need, request } from "./http.mjs";
import { checkAxe, launchBrowser } from "./browser.mjs";

const SHOTS = join(ROOT, "test-results", "console");

export async function consoleFlagsChecks({ url, adminToken, createTeamWithKey, defer }) {
  const app = `http://localhost:${new URL(url).port}`;
  mkdirSync(SHOTS, { recursive: true });
  const browser = await launchBrowser(defer);
  const ownerEmail = `flagger-${Date.now()}@example.com`;
  const team = await createTeamWithKey({ name: "Flagtown", ownerEmail, domains: [] });
  const at = (path) => `${app}/console/teams/${team.teamId}/${path}`;
  const api = async (method, path, body) => request(url, method, `/api/v1/${path}`, { key: team.key, body });
  const flag = async () => expectStatus(await api("GET", "flags/new-checkout"), 200, "the flag").body.data;
  const versions = async () => expectStatus(await api("GET", "flags/new-checkout/history"), 200, "history").body.data.length;
  let page;

  const reload = async () => {
    await page.reload();
    return page.content();
  };

  return {
    "console flags: a flag created, switched on and rolled out in the browser; a reload after each POST repeats nothing": async () => {
      const minted = expectStatus(await request(url, "POST", "/api/v1/admin/sign-in-links", { key: adminToken, body: { email: ownerEmail } }), 201, "link");
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      page = await context.newPage();
      await page.goto(minted.body.data.url.replace(/^http:\/\/[^/]+/, app));
      await page.click("[data-testid=confirm-sign-in]");
      await page.waitForURL(/\/keys$/);

      await page.goto(at("flags"));
      assert.equal(await page.locator("[data-testid=flags-empty]").count(), 1, "the empty state");
      await checkAxe(page, "the empty flags list");
      const create = page.locator("form[data-testid=create-flag]");
      await create.locator("input[name=key]").fill("new-checkout");
      await create.locator("input[name=name]").fill("New checkout");
      await create.locator("input[name=tags]").fill("checkout, web");
      await create.locator("button[type=submit]").click();
      await page.waitForURL(/\/flags\/new-checkout\?notice=created$/);
      await reload();
      assert.equal(await versions(), 1, "one version after a reload");
      assert.equal((await api("GET", "flags")).body.data.length, 1, "one flag");

      await page.goto(at("flags"));
      assert.equal(await page.locator("[data-testid=flag-row]").count(), 1);
      await page.click("[data-testid=flag-row] form[data-testid=toggle-flag][data-environment=production] button");
      await page.waitForURL(/\/flags\?notice=turned-on$/);
      await reload();
      assert.equal(await page.locator("form[data-testid=toggle-flag][data-environment=production][data-state=on]").count(), 1, "shown on");
      assert.equal((await flag()).environments.production.enabled, true);
      assert.equal(await versions(), 2, "one change after a reload");

      await page.goto(at("flags/new-checkout"));
      await page.click("[data-environment=production] [data-testid=fallthrough] summary");
      const fallthrough = page.locator("[data-environment=production] form[data-testid=edit-fallthrough]");
      await fallthrough.locator("select[name=serve]").selectOption("rollout");
      await fallthrough.locator("input[name=percent]").nth(0).fill("20");
      await fallthrough.locator("input[name=percent]").nth(1).fill("80");
      await fallthrough.locator("button[type=submit]").click();
      await page.waitForURL(/\/flags\/new-checkout\?notice=saved$/);
      const html = await reload();
      assert.ok(html.includes("Otherwise: 20% on, 80% off by key"), "the rollout in words");
      assert.equal(await versions(), 3, "one change after a reload");
      assert.deepEqual((await flag()).environments.production.fallthrough.rollout.variations, [
        { variant: "on", weight: 20_000 },
        { variant: "off", weight: 80_000 },
      ]);
    },

    "console flags: a rule made in the browser gets a second condition and a rollout; a served variant cannot be removed; a reload repeats nothing":
      async () => {
        need(page, "the signed-in page");
        await page.goto(at("flags/new-checkout"));
        const production = page.locator("[data-environment=production]");
        await production.locator("details:has(form[data-testid=add-rule]) > summary").click();
        const add = production.locator("form[data-testid=add-rule]");
        await add.locator("input[name=attribute]").fill("country");
        await add.locator("input[name=values]").fill("DE, FR");
        await add.locator("button[type=submit]").click();
        await page.waitForURL(/\/flags\/new-checkout\?notice=saved$/);
        const rule = production.locator("[data-testid=rule]").first();
        await rule.locator("details:has(form[data-testid=add-clause]) > summary").click();
        const clause = rule.locator("form[data-testid=add-clause]");
        await clause.locator("input[name=attribute]").fill("plan");
        await clause.locator("input[name=values]").fill("pro");
        await clause.locator("button[type=submit]").click();
        await page.waitForURL(/\/flags\/new-checkout\?notice=saved$/);
        await rule.locator("details:has(form[data-testid=edit-rule-serve]) > summary").click();
        const serve = rule.locator("form[data-testid=edit-rule-serve]");
        await serve.locator("select[name=serve]").selectOption("rollout");
        await serve.locator("input[name=percent]").nth(0).fill("30");
        await serve.locator("input[name=percent]").nth(1).fill("70");
        await serve.locator("button[type=submit]").click();
        await page.waitForURL(/\/flags\/new-checkout\?notice=saved$/);
        const html = await reload();
        assert.ok(html.includes("If country is one of DE, FR and plan is pro → 30% on, 70% off by key"), "the rule in words");
        assert.equal(await versions(), 6, "three changes after a reload");
        // `on` is served: removing it is refused beside the form, with the box still ticked.
        await page.locator("details:has(form[data-testid=edit-variants]) > summary").click();
        await page.locator("form[data-testid=edit-variants] input[name=remove][value=on]").check();
        await page.locator("form[data-testid=edit-variants] button[type=submit]").click();
        await page.waitForURL(/\/flags\/new-checkout\/variants$/);
        assert.ok((await page.content()).includes("is still served"), "the refusal in words");
        assert.equal(await page.locator("form[data-testid=edit-variants] input[name=remove][value=on]").isChecked(), true, "the form as posted");
        assert.equal(await versions(), 6, "nothing saved");
      },

    "console flags: a client key is shown once; a reload shows it no more": async () => {
      need(page, "the signed-in page");
      await page.goto(at("flags/environments"));
      const form = page.locator("section:has(#keys-production) form[data-testid=create-client-key]");
      await form.locator("input[name=name]").fill("Web app");
      await form.locator("button[type=submit]").click();
      await page.waitForURL(/\/flags\/environments\?notice=key-created$/);
      const key = (await page.locator("[data-testid=new-client-key]").textContent()).trim();
      assert.match(key, /^fck_/);
      assert.ok(!page.url().includes(key), "never in the URL");
      assert.ok(!(await reload()).includes(key), "the key after a reload");
      assert.equal(expectStatus(await api("GET", "flags/environments/production/client-keys"), 200, "keys").body.data.length, 1, "one key made");
      const boot = await request(url, "POST", "/api/v1/flags/client/bootstrap", { key, body: { context: { key: "user-1" } } });
      expectStatus(boot, 200, "the new key bootstraps");
    },

    "console flags: list, flag page, segments and environments pass axe and fit 390 px; screenshots at 1280 and 390": async () => {
      need(page, "the signed-in page");
      // Some evaluations, so the flag's insights have bars to draw.
      const keys = ["a", "b", "c", "d", "e", "f", "g"];
      for (const k of keys) {
        expectStatus(await api("POST", "flags/evaluate", { environment: "production", context: { key: `user-${k}` } }), 200, "evaluate");
      }
      // An isolate sends its counts at most every 10 s, from a waitUntil: those noted after its last
      // send go when the window ends, with no later evaluation (flags.insights.ts).
      await eventually(
        async () => {
          const hours = (await api("GET", "flags/new-checkout/insights")).body.data.hours;
          return hours.reduce((sum, h) => sum + h.evaluations, 0) === keys.length;
        },
        { timeoutMs: 30_000, intervalMs: 1_000 },
      );
      expectStatus(await api("POST", "flags/segments", { key: "beta", name: "Beta testers", included: ["user-a"] }), 201, "segment");
      const change = expectStatus(
        await api("POST", "flags/new-checkout/scheduled-changes", { environment: "production", at: "2031-01-02T09:30:00Z", enabled: false }),
        201,
        "scheduled change",
      ).body.data;
      const pages = ["flags", "flags/new-checkout", `flags/new-checkout/scheduled/${change.id}`, "flags/segments", "flags/segments/beta", "flags/environments"];
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
        const wide = {};
        for (const path of pages) {
          await page.goto(at(path));
          // Every form of the page, its folded ones too, is checked and must fit.
          await page.evaluate(() => {
            for (const d of document.querySelectorAll("details")) d.open = true;
          });
          await checkAxe(page, `${path} at ${width} px`);
          wide[path] = await page.evaluate(() => document.documentElement.scrollWidth);
          if (path === "flags" || path === "flags/new-checkout" || path.includes("/scheduled/")) {
            await page.screenshot({
              path: join(SHOTS, `flags-${width}-${path.replace(/\/scheduled\/.*/, "/scheduled").replace(/\W+/g, "-")}.png`),
              fullPage: true,
            });
          }
        }
        if (width === 390)
          assert.deepEqual(
            Object.entries(wide).filter(([, w]) => w > 390),
            [],
            "pages wider than the screen",
          );
      }
      await page.setViewportSize({ width: 1280, height: 900 });
    },
  };
}
