// The console's Feature flags pages: the list with a switch per environment (post/redirect/get,
// versioned with the console user as actor, a reload or a second post repeating nothing), creating
// flags, targeting in words, rollout shares (valid, and refused at 422 with nothing stored), the
// default rule, revert and a stale revert refused, segments (a used one cannot be deleted),
// environments and client keys (the plaintext shown once), roles, tenancy and the Origin rule.
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/api";
import { consoleTeam, followRedirect, memberOf, page, type ConsoleTeam } from "../helpers/console";

const at = (team: ConsoleTeam, rest: string) => `/console/teams/${team.teamId}/${rest}`;
const apiFlag = async (team: ConsoleTeam, key: string) => (await json(await call("GET", `flags/${key}`, { key: team.key }))).data;
const history = async (team: ConsoleTeam, key: string) => (await json(await call("GET", `flags/${key}/history`, { key: team.key }))).data;

async function makeFlag(team: ConsoleTeam, body: Record<string, unknown>) {
  const res = await call("POST", "flags", { key: team.key, body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await json(res)).data;
}

/** A boolean flag with a country rule, a segment rule and a 20/80 rollout as production's fallthrough. */
async function targetedFlag(team: ConsoleTeam, key = "checkout") {
  const seg = await call("POST", "flags/segments", { key: team.key, body: { key: "beta", included: ["u-1"] } });
  expect(seg.status).toBe(201);
  return makeFlag(team, {
    key,
    environments: {
      production: {
        enabled: true,
        rules: [
          { id: "by-country", clauses: [{ attribute: "country", op: "in", values: ["DE", "FR"] }], serve: { variant: "on" } },
          { id: "beta", clauses: [{ attribute: "key", op: "in_segment", values: ["beta"] }], serve: { variant: "on" } },
          {
            id: "split",
            clauses: [{ attribute: "plan", op: "in", values: ["pro"] }],
            serve: {
              rollout: {
                variations: [
                  { variant: "on", weight: 50_000 },
                  { variant: "off", weight: 50_000 },
                ],
              },
            },
          },
        ],
        fallthrough: {
          rollout: {
            variations: [
              { variant: "on", weight: 20_000 },
              { variant: "off", weight: 80_000 },
            ],
          },
        },
      },
    },
  });
}

describe("console flags: list, create, switch", () => {
  it("shows an empty state saying what a flag is, creates a boolean flag (303 to its page), and lists it with a switch per environment", async () => {
    const team = await consoleTeam("developer");
    const empty = await (await page("GET", at(team, "flags"), { cookie: team.cookie })).text();
    expect(empty).toContain('data-testid="flags-empty"');
    expect(empty).toContain("A feature flag lets you turn a feature on or off");
    expect(empty).toContain('data-testid="create-flag"');
    // The tabs lead to the segments and environments pages, which answer.
    for (const tab of ["flags/segments", "flags/environments"]) {
      expect(empty).toContain(`href="${at(team, tab)}"`);
      expect((await page("GET", at(team, tab), { cookie: team.cookie })).status).toBe(200);
    }

    const created = await page("POST", at(team, "flags"), {
      cookie: team.cookie,
      form: { key: "new-checkout", name: "New checkout", type: "boolean", tags: "checkout, web" },
    });
    expect(created.headers.get("location")).toBe(`${at(team, "flags/new-checkout")}?notice=created`);
    const flagPage = await (await followRedirect(created, team.cookie)).text();
    expect(flagPage).toContain("Flag created.");
    const flag = await apiFlag(team, "new-checkout");
    expect(flag).toMatchObject({
      name: "New checkout",
      type: "boolean",
      variants: { on: true, off: false },
      off_variant: "off",
      tags: ["checkout", "web"],
      version: 1,
    });
    expect((await history(team, "new-checkout"))[0].actor).toMatchObject({ type: "user", label: team.email });

    const list = await (await page("GET", at(team, "flags"), { cookie: team.cookie })).text();
    expect(list.match(/data-testid="flag-row"/g)).toHaveLength(1);
    expect(list).toContain("checkout, web");
    // One switch per environment (production and development), both off.
    expect(list.match(/<form[^>]*data-testid="toggle-flag"[^>]*data-state="off"/g)).toHaveLength(2);
  });

  it("creates a string flag from variant rows, and refuses a reserved key or a bad JSON value at 422 with nothing stored", async () => {
    const team = await consoleTeam("developer");
    const ok = await page("POST", at(team, "flags"), {
      cookie: team.cookie,
      form: { key: "theme", type: "string", variant_name: ["blue", "green", "", ""], variant_value: ["#00f", "#0f0", "", ""] },
    });
    expect(ok.status).toBe(303);
    expect(await apiFlag(team, "theme")).toMatchObject({ type: "string", variants: { blue: "#00f", green: "#0f0" }, off_variant: "blue" });

    const reserved = await page("POST", at(team, "flags"), { cookie: team.cookie, form: { key: "segments", type: "boolean" } });
    expect(reserved.status).toBe(422);
    expect(await reserved.text()).toContain("is reserved");
    const badJson = await page("POST", at(team, "flags"), {
      cookie: team.cookie,
      form: { key: "limits", type: "json", variant_name: ["a"], variant_value: ["{oops"] },
    });
    expect(badJson.status).toBe(422);
    const html = await badJson.text();
    expect(html).toContain("variants.a: must be a json");
    expect(html).toContain('value="limits"');
    const all = (await json(await call("GET", "flags", { key: team.key }))).data.map((f: { key: string }) => f.key);
    expect(all).toEqual(["theme"]);
  });

  it("a switch posts, redirects (303) to the list with a notice, writes one version with the user as actor; a reload and a second post repeat nothing", async () => {
    const team = await consoleTeam("developer");
    await makeFlag(team, { key: "kill-switch" });
    const form = { enabled: "true", back: "list" };
    const toggled = await page("POST", at(team, "flags/kill-switch/environments/production/toggle"), { cookie: team.cookie, form });
    expect(toggled.headers.get("location")).toBe(`${at(team, "flags")}?notice=turned-on`);
    const listed = await (await followRedirect(toggled, team.cookie)).text();
    expect(listed).toContain("Turned on.");
    expect(listed).toMatch(/data-testid="toggle-flag" data-environment="production" data-state="on"/);
    let flag = await apiFlag(team, "kill-switch");
    expect(flag.version).toBe(2);
    expect(flag.environments.production.enabled).toBe(true);
    expect(flag.environments.development.enabled).toBe(false);
    const [latest] = await history(team, "kill-switch");
    expect(latest).toMatchObject({ version: 2, actor: { type: "user", label: team.email }, changes: ["environments.production.enabled"] });

    // A reload of the page the 303 led to is a GET; the same form posted again changes nothing.
    await page("GET", toggled.headers.get("location")!, { cookie: team.cookie });
    const again = await page("POST", at(team, "flags/kill-switch/environments/production/toggle"), { cookie: team.cookie, form });
    expect(again.headers.get("location")).toBe(`${at(team, "flags")}?notice=unchanged`);
    flag = await apiFlag(team, "kill-switch");
    expect(flag.version).toBe(2);
    expect(await history(team, "kill-switch")).toHaveLength(2);

    // Off again from the flag's page: back to the flag's page.
    const off = await page("POST", at(team, "flags/kill-switch/environments/production/toggle"), {
      cookie: team.cookie,
      form: { enabled: "false", back: "flag" },
    });
    expect(off.headers.get("location")).toBe(`${at(team, "flags/kill-switch")}?notice=turned-off`);
    expect((await apiFlag(team, "kill-switch")).environments.production.enabled).toBe(false);
    // An environment the team does not have is a 404.
    expect((await page("POST", at(team, "flags/kill-switch/environments/nowhere/toggle"), { cookie: team.cookie, form })).status).toBe(404);
  });
});

describe("console flags: a flag's page", () => {
  it("says the rules in words, per environment, with the fallthrough's shares", async () => {
    const team = await consoleTeam("viewer");
    await targetedFlag(team);
    const html = await (await page("GET", at(team, "flags/checkout"), { cookie: team.cookie })).text();
    expect(html).toContain("If country is one of DE, FR → variant on");
    expect(html).toContain("Users in segment beta → variant on");
    expect(html).toContain("If plan is pro → 50% on, 50% off by key");
    expect(html).toContain("Otherwise: 20% on, 80% off by key");
    expect(html).toContain("Otherwise: variant on"); // development, never configured
    expect(html).toContain('data-testid="insights"');
    expect(html).toContain('data-testid="history-row"');
  });

  it("edits a rollout's shares (303, a new version); shares not adding up to 100% re-render at 422 naming the problem, nothing stored", async () => {
    const team = await consoleTeam("developer");
    await targetedFlag(team);
    const action = at(team, "flags/checkout/environments/production/rules/split/serve");
    const bad = await page("POST", action, { cookie: team.cookie, form: { version: "1", serve: "rollout", variant: ["on", "off"], percent: ["30", "60"] } });
    expect(bad.status).toBe(422);
    const refused = await bad.text();
    expect(refused).toContain("The shares add up to 90%; they must add up to exactly 100%.");
    expect(refused).toContain('data-testid="form-problem"');
    expect((await apiFlag(team, "checkout")).version).toBe(1);
    const notNumber = await page("POST", action, {
      cookie: team.cookie,
      form: { version: "1", serve: "rollout", variant: ["on", "off"], percent: ["abc", "100"] },
    });
    expect(notNumber.status).toBe(422);
    expect((await apiFlag(team, "checkout")).version).toBe(1);

    const good = await page("POST", action, {
      cookie: team.cookie,
      form: { version: "1", serve: "rollout", variant: ["on", "off"], percent: ["33.333", "66.667"] },
    });
    expect(good.headers.get("location")).toBe(`${at(team, "flags/checkout")}?notice=saved`);
    const flag = await apiFlag(team, "checkout");
    expect(flag.version).toBe(2);
    expect(flag.environments.production.rules[2].serve.rollout.variations).toEqual([
      { variant: "on", weight: 33_333 },
      { variant: "off", weight: 66_667 },
    ]);
    // The other rules are untouched.
    expect(flag.environments.production.rules.map((r: { id: string }) => r.id)).toEqual(["by-country", "beta", "split"]);
    expect((await history(team, "checkout"))[0]).toMatchObject({ actor: { type: "user" }, changes: ["environments.production.rules"] });
  });

  it("sets the default rule to a rollout or a variant, and the off variant", async () => {
    const team = await consoleTeam("developer");
    await makeFlag(team, { key: "split-me" });
    const action = at(team, "flags/split-me/environments/development/fallthrough");
    const rollout = await page("POST", action, {
      cookie: team.cookie,
      form: { version: "1", serve: "rollout", bucket_by: "org", variant: ["on", "off"], percent: ["10", "90"] },
    });
    expect(rollout.status).toBe(303);
    let flag = await apiFlag(team, "split-me");
    expect(flag.environments.development.fallthrough).toEqual({
      rollout: {
        bucket_by: "org",
        variations: [
          { variant: "on", weight: 10_000 },
          { variant: "off", weight: 90_000 },
        ],
      },
    });
    expect(await (await page("GET", at(team, "flags/split-me"), { cookie: team.cookie })).text()).toContain("Otherwise: 10% on, 90% off by org");
    expect((await page("POST", action, { cookie: team.cookie, form: { version: "2", serve: "variant:off" } })).status).toBe(303);
    expect((await page("POST", at(team, "flags/split-me/off-variant"), { cookie: team.cookie, form: { version: "3", off_variant: "on" } })).status).toBe(303);
    flag = await apiFlag(team, "split-me");
    expect(flag).toMatchObject({ version: 4, off_variant: "on", environments: { development: { fallthrough: { variant: "off" } } } });
    // A form made against an older version is refused (412), nothing changed.
    const stale = await page("POST", at(team, "flags/split-me/off-variant"), { cookie: team.cookie, form: { version: "3", off_variant: "off" } });
    expect(stale.status).toBe(412);
    expect(await stale.text()).toContain("This flag changed since you opened the page (it is at version 4; your form was made against version 3)");
    expect((await apiFlag(team, "split-me")).off_variant).toBe("on");
  });

  it("reverts to a version (a new version equal to it); a stale revert is refused with a clear message and changes nothing", async () => {
    const team = await consoleTeam("developer");
    await makeFlag(team, { key: "rev" });
    await call("PATCH", "flags/rev", { key: team.key, body: { name: "Second" } });
    await call("PATCH", "flags/rev", { key: team.key, body: { name: "Third" } });
    const html = await (await page("GET", at(team, "flags/rev"), { cookie: team.cookie })).text();
    expect(html.match(/data-testid="revert-flag"/g)).toHaveLength(2);
    const reverted = await page("POST", at(team, "flags/rev/revert"), { cookie: team.cookie, form: { to: "1", version: "3" } });
    expect(reverted.headers.get("location")).toBe(`${at(team, "flags/rev")}?notice=reverted`);
    let flag = await apiFlag(team, "rev");
    expect(flag).toMatchObject({ version: 4, name: "rev" });
    expect((await history(team, "rev"))[0]).toMatchObject({ version: 4, actor: { type: "user", label: team.email }, changes: ["name"] });

    // The same form again (made against version 3) is stale now.
    const stale = await page("POST", at(team, "flags/rev/revert"), { cookie: team.cookie, form: { to: "2", version: "3" } });
    expect(stale.status).toBe(412);
    expect(await stale.text()).toContain("Nothing was saved");
    flag = await apiFlag(team, "rev");
    expect(flag).toMatchObject({ version: 4, name: "rev" });
  });

  it("adds and removes a rule of one clause, in words", async () => {
    const team = await consoleTeam("developer");
    await makeFlag(team, { key: "ruled" });
    const add = await page("POST", at(team, "flags/ruled/environments/production/rules"), {
      cookie: team.cookie,
      form: { version: "1", attribute: "age", op: "gte", values: "18", serve: "variant:on" },
    });
    expect(add.status).toBe(303);
    const flag = await apiFlag(team, "ruled");
    expect(flag.environments.production.rules[0]).toMatchObject({ clauses: [{ attribute: "age", op: "gte", values: [18] }], serve: { variant: "on" } });
    expect(await (await page("GET", at(team, "flags/ruled"), { cookie: team.cookie })).text()).toContain("If age is at least 18 → variant on");
    const noValues = await page("POST", at(team, "flags/ruled/environments/production/rules"), {
      cookie: team.cookie,
      form: { version: "2", attribute: "age", op: "gte", values: "", serve: "variant:on" },
    });
    expect(noValues.status).toBe(422);
    const ruleId = flag.environments.production.rules[0].id;
    expect(
      (await page("POST", at(team, `flags/ruled/environments/production/rules/${ruleId}/remove`), { cookie: team.cookie, form: { version: "2" } })).status,
    ).toBe(303);
    expect((await apiFlag(team, "ruled")).environments.production.rules).toEqual([]);
  });
});

describe("console flags: schedules and insights", () => {
  it("schedules a change (303, listed as pending), cancels it, and refuses a missing time (422)", async () => {
    const team = await consoleTeam("developer");
    await makeFlag(team, { key: "later" });
    const base = at(team, "flags/later/scheduled");
    const made = await page("POST", base, { cookie: team.cookie, form: { version: "1", environment: "production", enabled: "true", at: "2031-01-02T09:30" } });
    expect(made.headers.get("location")).toBe(`${at(team, "flags/later")}?notice=scheduled`);
    const [change] = (await json(await call("GET", "flags/later/scheduled-changes", { key: team.key }))).data;
    expect(change).toMatchObject({ environment: "production", at: "2031-01-02T09:30:00.000Z", enabled: true, status: "pending", actor: { type: "user" } });
    const html = await (await page("GET", at(team, "flags/later"), { cookie: team.cookie })).text();
    expect(html).toContain('data-testid="scheduled-row" data-status="pending"');
    expect(html).toContain("turn on");
    expect((await page("POST", base, { cookie: team.cookie, form: { version: "1", environment: "production", enabled: "true", at: "" } })).status).toBe(422);
    expect((await page("POST", `${base}/${change.id}/cancel`, { cookie: team.cookie })).status).toBe(303);
    expect((await json(await call("GET", "flags/later/scheduled-changes", { key: team.key }))).data).toEqual([]);
  });

  it("shows one scheduled change on its own page (what, who, when, what came of it); a viewer reads it without the cancel; another team's is a 404", async () => {
    const team = await consoleTeam("developer");
    await makeFlag(team, { key: "later" });
    await page("POST", at(team, "flags/later/scheduled"), {
      cookie: team.cookie,
      form: { version: "1", environment: "production", enabled: "true", at: "2031-01-02T09:30" },
    });
    const [change] = (await json(await call("GET", "flags/later/scheduled-changes", { key: team.key }))).data;
    const url = at(team, `flags/later/scheduled/${change.id}`);
    // The flag's list links to it.
    expect(await (await page("GET", at(team, "flags/later"), { cookie: team.cookie })).text()).toContain(`href="${url}"`);
    const res = await page("GET", url, { cookie: team.cookie });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('data-testid="scheduled-change" data-status="pending"');
    expect(html).toContain("turn on");
    expect(html).toContain("production");
    expect(html).toContain('datetime="2031-01-02T09:30:00.000Z"');
    expect(html).toContain(team.email);
    expect(html).toContain(`flags/later/scheduled/${change.id}/cancel`);
    // A viewer reads the same page, with nothing to press.
    const viewer = await memberOf(team.teamId, "viewer");
    const read = await (await page("GET", url, { cookie: viewer.cookie })).text();
    expect(read).toContain('data-testid="scheduled-change"');
    expect(read).not.toContain("/cancel");
    // Another team's change, an unknown id and an unknown flag answer the console's 404.
    const other = await consoleTeam("developer");
    await makeFlag(other, { key: "later" });
    expect((await page("GET", at(other, `flags/later/scheduled/${change.id}`), { cookie: other.cookie })).status).toBe(404);
    expect((await page("GET", at(team, "flags/later/scheduled/nope"), { cookie: team.cookie })).status).toBe(404);
    expect((await page("GET", at(team, `flags/gone/scheduled/${change.id}`), { cookie: team.cookie })).status).toBe(404);
    // Cancelled, it is gone.
    await page("POST", `${url}/cancel`, { cookie: team.cookie });
    expect((await page("GET", url, { cookie: team.cookie })).status).toBe(404);
  });

  it("draws evaluations per variant per hour with a table for screen readers once the flag is evaluated", async () => {
    const team = await consoleTeam("viewer");
    await makeFlag(team, { key: "counted", environments: { production: { enabled: true } } });
    const before = await (await page("GET", at(team, "flags/counted"), { cookie: team.cookie })).text();
    expect(before).toContain('data-testid="insights-empty"');
    for (const key of ["a", "b", "c"]) {
      expect((await call("POST", "flags/evaluate", { key: team.key, body: { environment: "production", context: { key } } })).status).toBe(200);
    }
    const html = await (await page("GET", at(team, "flags/counted"), { cookie: team.cookie })).text();
    expect(html).not.toContain('data-testid="insights-empty"');
    expect(html).toContain("Evaluations per variant in production, last 24 hours");
    expect(html).toContain("Evaluations serving on per hour in production: 3 evaluations in the last 24 hours");
    expect(html).toMatch(/<table class="skip"><caption>Evaluations serving on per hour in production<\/caption>/);
  });
});

describe("console flags: segments, environments, client keys", () => {
  it("creates a segment, and refuses (409) to delete one a flag uses, naming the flag; deletes it once unused", async () => {
    const team = await consoleTeam("developer");
    const created = await page("POST", at(team, "flags/segments"), {
      cookie: team.cookie,
      form: { key: "beta", name: "Beta", included: "u-1\nu-2", excluded: "" },
    });
    expect(created.headers.get("location")).toBe(`${at(team, "flags/segments/beta")}?notice=created`);
    const rule = await page("POST", at(team, "flags/segments/beta/rules"), {
      cookie: team.cookie,
      form: { attribute: "email", op: "ends_with", values: "@example.com" },
    });
    expect(rule.status).toBe(303);
    const segment = (await json(await call("GET", "flags/segments/beta", { key: team.key }))).data;
    expect(segment).toMatchObject({ included: ["u-1", "u-2"], rules: [{ clauses: [{ attribute: "email", op: "ends_with", values: ["@example.com"] }] }] });
    await makeFlag(team, {
      key: "uses-beta",
      environments: { production: { rules: [{ clauses: [{ attribute: "key", op: "in_segment", values: ["beta"] }], serve: { variant: "on" } }] } },
    });
    const list = await (await page("GET", at(team, "flags/segments"), { cookie: team.cookie })).text();
    expect(list).toContain('data-testid="segment-row"');
    expect(list).toContain("If email ends with @example.com");
    expect(list).toContain(`href="${at(team, "flags/uses-beta")}"`);

    const refused = await page("POST", at(team, "flags/segments/beta/delete"), { cookie: team.cookie });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain("flags use this segment in their rules (uses-beta)");
    expect((await call("GET", "flags/segments/beta", { key: team.key })).status).toBe(200);

    await call("DELETE", "flags/uses-beta", { key: team.key });
    const deleted = await page("POST", at(team, "flags/segments/beta/delete"), { cookie: team.cookie });
    expect(deleted.headers.get("location")).toBe(`${at(team, "flags/segments")}?notice=deleted`);
    expect((await call("GET", "flags/segments/beta", { key: team.key })).status).toBe(404);
  });

  it("creates an environment, and a client key whose plaintext is shown once (never in the URL); a second GET does not show it; revokes it", async () => {
    const team = await consoleTeam("developer");
    expect((await page("POST", at(team, "flags/environments"), { cookie: team.cookie, form: { key: "staging", name: "Staging" } })).status).toBe(303);
    const created = await page("POST", at(team, "flags/environments/staging/client-keys"), {
      cookie: team.cookie,
      form: { name: "Web", allowed_origins: "https://app.example.com" },
    });
    const location = created.headers.get("location")!;
    expect(location).toBe(`${at(team, "flags/environments")}?notice=key-created`);
    const first = await (await followRedirect(created, team.cookie)).text();
    const key = /data-testid="new-client-key">\s*(fck_[A-Za-z0-9_-]+)/.exec(first)?.[1];
    expect(key).toBeDefined();
    const second = await (await page("GET", location, { cookie: team.cookie })).text();
    expect(second).not.toContain(key!);
    expect(second).toContain("was shown once");
    // The key works on the client API.
    const boot = await call("POST", "flags/client/bootstrap", { headers: { authorization: `Bearer ${key}` }, body: { context: { key: "u" } } });
    expect(boot.status).toBe(200);
    const [listed] = (await json(await call("GET", "flags/environments/staging/client-keys", { key: team.key }))).data;
    expect(listed).toMatchObject({ name: "Web", allowed_origins: ["https://app.example.com"] });
    const bad = await page("POST", at(team, "flags/environments/staging/client-keys"), {
      cookie: team.cookie,
      form: { allowed_origins: "https://app.example.com/path" },
    });
    expect(bad.status).toBe(422);
    const revoked = await page("POST", at(team, `flags/environments/staging/client-keys/${listed.id}/revoke`), { cookie: team.cookie });
    expect(revoked.status).toBe(303);
    expect((await json(await call("GET", "flags/environments/staging/client-keys", { key: team.key }))).data).toEqual([]);
  });
});

describe("console flags: roles, tenancy, Origin", () => {
  it("a viewer reads every page and sees no write form; a viewer's POST is refused (403) and changes nothing", async () => {
    const team = await consoleTeam("owner");
    await targetedFlag(team);
    const viewer = await memberOf(team.teamId, "viewer");
    for (const path of ["flags", "flags/checkout", "flags/segments", "flags/segments/beta", "flags/environments"]) {
      const res = await page("GET", at(team, path), { cookie: viewer.cookie });
      expect(res.status, path).toBe(200);
      const html = await res.text();
      expect(html, path).not.toMatch(/<form method="post" action="\/console\/teams\/[^"]*\/flags/);
      expect(html, path).toContain("your role can read this page");
    }
    const res = await page("POST", at(team, "flags/checkout/environments/development/toggle"), { cookie: viewer.cookie, form: { enabled: "true" } });
    expect(res.status).toBe(403);
    const created = await page("POST", at(team, "flags"), { cookie: viewer.cookie, form: { key: "sneaky" } });
    expect(created.status).toBe(403);
    expect((await apiFlag(team, "checkout")).version).toBe(1);
    expect((await call("GET", "flags/sneaky", { key: team.key })).status).toBe(404);
  });

  it("another team's flag answers the console's 404, and its switch changes nothing", async () => {
    const owner = await consoleTeam("owner");
    await makeFlag(owner, { key: "private" });
    const intruder = await consoleTeam("owner");
    expect((await page("GET", at(intruder, "flags/private"), { cookie: intruder.cookie })).status).toBe(404);
    const res = await page("POST", at(intruder, "flags/private/environments/production/toggle"), { cookie: intruder.cookie, form: { enabled: "true" } });
    expect(res.status).toBe(404);
    // And the owner's team id with the intruder's session: not a member, 404.
    expect((await page("GET", at(owner, "flags/private"), { cookie: intruder.cookie })).status).toBe(404);
    expect((await apiFlag(owner, "private")).version).toBe(1);
  });

  it("a POST without the console's Origin is refused (403) like every console form", async () => {
    const team = await consoleTeam("owner");
    await makeFlag(team, { key: "csrf" });
    for (const origin of [null, "https://evil.test"]) {
      const res = await page("POST", at(team, "flags/csrf/environments/production/toggle"), { cookie: team.cookie, origin, form: { enabled: "true" } });
      expect(res.status).toBe(403);
    }
    expect((await apiFlag(team, "csrf")).version).toBe(1);
  });
});
