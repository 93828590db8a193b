// The console's flag page beyond one-condition rules: conditions added to and removed from a rule
// (the rule in words shows them all), a rule serving a new rollout (its attribute and shares, as
// the default rule's), the variants edited after creation (a served variant refused with the API's
// own message), and a scheduled change of the default rule. Each form: its happy path (303, one
// version with the console user), a 422 that re-renders with the typed values kept and stores
// nothing, a 412 when the form was made against an older version, a viewer's 403 and another
// team's 404.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { flagStore } from "../../src/products/flags/flags.store";
import { call, json } from "../helpers/api";
import { consoleTeam, memberOf, page, type ConsoleTeam } from "../helpers/console";
import { evaluate } from "../products/flags/flags-helpers";

const at = (team: ConsoleTeam, rest: string) => `/console/teams/${team.teamId}/${rest}`;
const apiFlag = async (team: ConsoleTeam, key: string) => (await json(await call("GET", `flags/${key}`, { key: team.key }))).data;
const pageHtml = async (team: ConsoleTeam, key: string) => (await page("GET", at(team, `flags/${key}`), { cookie: team.cookie })).text();

async function makeFlag(team: ConsoleTeam, body: Record<string, unknown>) {
  const res = await call("POST", "flags", { key: team.key, body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await json(res)).data;
}

/** A boolean flag whose production has one rule (`by-country`) serving `on`. */
const countryFlag = (team: ConsoleTeam, key = "checkout") =>
  makeFlag(team, {
    key,
    environments: {
      production: {
        enabled: true,
        rules: [{ id: "by-country", clauses: [{ attribute: "country", op: "in", values: ["DE", "FR"] }], serve: { variant: "on" } }],
      },
    },
  });

const post = (team: ConsoleTeam, path: string, form: Record<string, string | string[]>, cookie = team.cookie) => page("POST", at(team, path), { cookie, form });

/** The refused form's problem and the page's status, and that the flag stayed at `version`. */
async function refused(team: ConsoleTeam, res: Response, status: number, key: string, version: number): Promise<string> {
  expect(res.status).toBe(status);
  const html = await res.text();
  expect(html).toContain('data-testid="form-problem"');
  expect((await apiFlag(team, key)).version).toBe(version);
  return html;
}

const RULE = "flags/checkout/environments/production/rules/by-country";

describe("console flags: rules of several conditions", () => {
  it("adds a condition to a rule (all shown in words), removes one, and keeps the last; a bad condition is 422 with the typed values kept; a stale form 412", async () => {
    const team = await consoleTeam("developer");
    await countryFlag(team);
    const added = await post(team, `${RULE}/clauses`, { version: "1", attribute: "plan", op: "in", values: "pro, team" });
    expect(added.headers.get("location")).toBe(`${at(team, "flags/checkout")}?notice=saved`);
    let flag = await apiFlag(team, "checkout");
    expect(flag.version).toBe(2);
    expect(flag.environments.production.rules[0]).toMatchObject({
      id: "by-country",
      clauses: [
        { attribute: "country", op: "in", values: ["DE", "FR"] },
        { attribute: "plan", op: "in", values: ["pro", "team"] },
      ],
      serve: { variant: "on" },
    });
    const html = await pageHtml(team, "checkout");
    expect(html).toContain("If country is one of DE, FR and plan is one of pro, team → variant on");
    expect(html.match(/data-testid="remove-clause"/g)).toHaveLength(2);
    const [latest] = (await json(await call("GET", "flags/checkout/history", { key: team.key }))).data;
    expect(latest).toMatchObject({ version: 2, actor: { type: "user", label: team.email }, changes: ["environments.production.rules"] });

    // A condition without an attribute: 422 beside the form, what was typed kept, nothing stored.
    const bad = await refused(team, await post(team, `${RULE}/clauses`, { version: "2", attribute: "", op: "gte", values: "18" }), 422, "checkout", 2);
    expect(bad).toMatch(/Nothing was saved: attribute can(&#39;|')t be blank/);
    expect(bad).toContain('value="18"');
    expect(bad).toMatch(/<option value="gte" selected="">/);

    // A form made against version 1 is stale now.
    const stale = await refused(team, await post(team, `${RULE}/clauses`, { version: "1", attribute: "age", op: "gte", values: "18" }), 412, "checkout", 2);
    expect(stale).toContain("it is at version 2; your form was made against version 1");

    expect((await post(team, `${RULE}/clauses/remove`, { version: "2", clause: "0" })).status).toBe(303);
    flag = await apiFlag(team, "checkout");
    expect(flag.environments.production.rules[0].clauses).toEqual([{ attribute: "plan", op: "in", values: ["pro", "team"] }]);
    expect(await pageHtml(team, "checkout")).toContain("If plan is one of pro, team → variant on");
    // The removal's form made against version 2 is stale now too.
    await refused(team, await post(team, `${RULE}/clauses/remove`, { version: "2", clause: "0" }), 412, "checkout", 3);
    // The last condition stays: a rule without one would match everyone.
    const last = await refused(team, await post(team, `${RULE}/clauses/remove`, { version: "3", clause: "0" }), 422, "checkout", 3);
    expect(last).toContain("A rule keeps at least one condition: remove the rule instead.");
  });

  it("a rule past the API's 30 conditions is refused naming the list, as the API refuses it", async () => {
    const team = await consoleTeam("developer");
    const clause = { attribute: "country", op: "in", values: ["FR"] };
    await makeFlag(team, {
      key: "checkout",
      environments: { production: { rules: [{ id: "by-country", clauses: Array(30).fill(clause), serve: { variant: "on" } }] } },
    });
    const html = await refused(team, await post(team, `${RULE}/clauses`, { version: "1", attribute: "plan", op: "in", values: "pro" }), 422, "checkout", 1);
    expect(html).toContain("environments.production.rules.0.clauses has more than 30 clauses");
  });
});

describe("console flags: the order of rules", () => {
  it("moves a rule down and up (rules are tried in order); past either end is refused; a stale form 412", async () => {
    const team = await consoleTeam("developer");
    await makeFlag(team, {
      key: "checkout",
      environments: {
        production: {
          enabled: true,
          rules: [
            { id: "by-country", clauses: [{ attribute: "country", op: "in", values: ["DE"] }], serve: { variant: "on" } },
            { id: "by-plan", clauses: [{ attribute: "plan", op: "in", values: ["pro"] }], serve: { variant: "off" } },
          ],
        },
      },
    });
    const order = async () => (await apiFlag(team, "checkout")).environments.production.rules.map((r: { id: string }) => r.id);
    const html = await pageHtml(team, "checkout");
    // The first rule moves only down, the last only up.
    expect(html.match(/data-testid="move-rule-down"/g)).toHaveLength(1);
    expect(html.match(/data-testid="move-rule-up"/g)).toHaveLength(1);

    const moved = await post(team, `${RULE}/move`, { version: "1", direction: "down" });
    expect(moved.status).toBe(303);
    expect(await order()).toEqual(["by-plan", "by-country"]);
    // By key: the context in DE with plan pro now meets the plan rule first.
    const flags = await evaluate(team.key, "production", { key: "u", country: "DE", plan: "pro" });
    expect(flags.checkout).toMatchObject({ variant: "off" });

    const past = await refused(team, await post(team, `${RULE}/move`, { version: "2", direction: "down" }), 422, "checkout", 2);
    expect(past).toContain("The rule cannot move that way. Nothing was saved.");
    await refused(team, await post(team, `${RULE}/move`, { version: "1", direction: "up" }), 412, "checkout", 2);
    expect((await post(team, `${RULE}/move`, { version: "2", direction: "up" })).status).toBe(303);
    expect(await order()).toEqual(["by-country", "by-plan"]);
  });
});

describe("console flags: a rule's description", () => {
  it("a new rule takes one, a rule's is changed and cleared; past 500 characters is 422 with the typed text kept; a stale form 412", async () => {
    const team = await consoleTeam("developer");
    await countryFlag(team);
    const added = await post(team, "flags/checkout/environments/production/rules", {
      version: "1",
      description: "Pro customers",
      attribute: "plan",
      op: "in",
      values: "pro",
      serve: "variant:off",
    });
    expect(added.status).toBe(303);
    let rules = (await apiFlag(team, "checkout")).environments.production.rules;
    expect(rules[1]).toMatchObject({ description: "Pro customers", clauses: [{ attribute: "plan", op: "in", values: ["pro"] }] });
    expect(await pageHtml(team, "checkout")).toContain('<p class="muted small" data-testid="rule-description">Pro customers</p>');

    expect((await post(team, `${RULE}/description`, { version: "2", description: "  Europe first  " })).status).toBe(303);
    rules = (await apiFlag(team, "checkout")).environments.production.rules;
    expect(rules[0]).toMatchObject({ id: "by-country", description: "Europe first" });
    const long = "x".repeat(501);
    const html = await refused(team, await post(team, `${RULE}/description`, { version: "3", description: long }), 422, "checkout", 3);
    expect(html).toContain(`value="${long}"`);
    await refused(team, await post(team, `${RULE}/description`, { version: "2", description: "old" }), 412, "checkout", 3);
    expect((await post(team, `${RULE}/description`, { version: "3", description: "" })).status).toBe(303);
    rules = (await apiFlag(team, "checkout")).environments.production.rules;
    expect(rules[0].description).toBeUndefined();
  });
});

describe("console flags: what a rule serves", () => {
  it("makes a rule a rollout with its attribute and shares, edits them, and back to a variant; shares not adding up are 422 with the typed shares kept", async () => {
    const team = await consoleTeam("developer");
    await countryFlag(team);
    const rollout = { version: "1", serve: "rollout", bucket_by: "org", variant: ["on", "off"], percent: ["25", "75"] };
    expect((await post(team, `${RULE}/serve`, rollout)).status).toBe(303);
    let flag = await apiFlag(team, "checkout");
    expect(flag.environments.production.rules[0].serve).toEqual({
      rollout: {
        bucket_by: "org",
        variations: [
          { variant: "on", weight: 25_000 },
          { variant: "off", weight: 75_000 },
        ],
      },
    });
    const html = await pageHtml(team, "checkout");
    expect(html).toContain("If country is one of DE, FR → 25% on, 75% off by org");
    // The rule's form shows its shares, as the default rule's does.
    expect(html).toMatch(/data-testid="edit-rule-serve"[\s\S]*?name="bucket_by"[^>]*value="org"/);

    const bad = await refused(team, await post(team, `${RULE}/serve`, { ...rollout, version: "2", percent: ["30", "30.5"] }), 422, "checkout", 2);
    expect(bad).toContain("The shares add up to 60.5%; they must add up to exactly 100%.");
    expect(bad).toContain('value="30.5"');

    expect((await post(team, `${RULE}/serve`, { ...rollout, version: "2", percent: ["33.333", "66.667"] })).status).toBe(303);
    flag = await apiFlag(team, "checkout");
    expect(flag.environments.production.rules[0].serve.rollout.variations).toEqual([
      { variant: "on", weight: 33_333 },
      { variant: "off", weight: 66_667 },
    ]);
    expect((await post(team, `${RULE}/serve`, { version: "3", serve: "variant:off" })).status).toBe(303);
    expect((await apiFlag(team, "checkout")).environments.production.rules[0].serve).toEqual({ variant: "off" });
    await refused(team, await post(team, `${RULE}/serve`, { version: "3", serve: "variant:on" }), 412, "checkout", 4);
  });

  it("adds a rule serving a rollout; a variant the flag lacks is 422 with the condition kept", async () => {
    const team = await consoleTeam("developer");
    await countryFlag(team);
    const path = "flags/checkout/environments/production/rules";
    const form = {
      version: "1",
      attribute: "plan",
      op: "in",
      values: "pro",
      serve: "rollout",
      bucket_by: "key",
      variant: ["on", "off"],
      percent: ["50", "50"],
    };
    expect((await post(team, path, form)).status).toBe(303);
    const rules = (await apiFlag(team, "checkout")).environments.production.rules;
    expect(rules).toHaveLength(2);
    expect(rules[1]).toMatchObject({
      clauses: [{ attribute: "plan", op: "in", values: ["pro"] }],
      serve: {
        rollout: {
          variations: [
            { variant: "on", weight: 50_000 },
            { variant: "off", weight: 50_000 },
          ],
        },
      },
    });
    expect(rules[1].serve.rollout.bucket_by).toBeUndefined();
    expect(await pageHtml(team, "checkout")).toContain("If plan is pro → 50% on, 50% off by key");

    const html = await refused(team, await post(team, path, { ...form, version: "2", values: "team", serve: "variant:maybe" }), 422, "checkout", 2);
    expect(html).toContain("environments.production.rules.2.serve.variant must name one of the variants");
    expect(html).toContain('value="team"');
    await refused(team, await post(team, path, form), 412, "checkout", 2);
  });
});

describe("console flags: variants after creation", () => {
  it("changes a value, adds and renames variants; removing a served variant is refused with the API's message and the rows kept; a stale form 412", async () => {
    const team = await consoleTeam("developer");
    await makeFlag(team, {
      key: "theme",
      type: "string",
      variants: { blue: "#00f", green: "#0f0" },
      off_variant: "blue",
      environments: { production: { enabled: true, fallthrough: { variant: "green" } } },
    });
    const edit = { version: "1", variant_original: ["blue", "green", ""], variant_name: ["blue", "green", "red"], variant_value: ["#00f", "#0a0", "#f00"] };
    expect((await post(team, "flags/theme/variants", edit)).status).toBe(303);
    let flag = await apiFlag(team, "theme");
    expect(flag).toMatchObject({ version: 2, variants: { blue: "#00f", green: "#0a0", red: "#f00" } });
    expect((await json(await call("GET", "flags/theme/history", { key: team.key }))).data[0]).toMatchObject({ actor: { type: "user" }, changes: ["variants"] });
    const html = await pageHtml(team, "theme");
    expect(html.match(/data-testid="variant-edit-row"/g)).toHaveLength(5);

    // green is production's default rule: removing it is the API's 422, shown in the form with what was posted.
    const removal = {
      version: "2",
      variant_original: ["blue", "green", "red"],
      variant_name: ["blue", "green", "red"],
      variant_value: ["#00f", "#0a0", "#f01"],
      remove: ["green"],
    };
    const refusedHtml = await refused(team, await post(team, "flags/theme/variants", removal), 422, "theme", 2);
    expect(refusedHtml).toContain("environments.production.fallthrough.variant must name one of the variants");
    expect(refusedHtml).toContain("a variant you removed or renamed is still served");
    expect(refusedHtml).toMatch(/name="remove" value="green" checked=""/);
    expect(refusedHtml).toContain('value="#f01"');
    // Renaming the served variant is refused the same way; renaming an unserved one is a new version.
    await refused(team, await post(team, "flags/theme/variants", { ...removal, remove: [], variant_name: ["blue", "lime", "red"] }), 422, "theme", 2);
    expect((await post(team, "flags/theme/variants", { ...removal, remove: [], variant_name: ["blue", "green", "crimson"] })).status).toBe(303);
    flag = await apiFlag(team, "theme");
    expect(flag.variants).toEqual({ blue: "#00f", green: "#0a0", crimson: "#f01" });
    // The first edit's form again: stale.
    await refused(team, await post(team, "flags/theme/variants", edit), 412, "theme", 3);
  });

  it("a boolean flag's values are true or false (422 naming the variant otherwise)", async () => {
    const team = await consoleTeam("developer");
    await makeFlag(team, { key: "bool" });
    const html = await refused(
      team,
      await post(team, "flags/bool/variants", { version: "1", variant_original: ["on", "off"], variant_name: ["on", "off"], variant_value: ["yes", "false"] }),
      422,
      "bool",
      1,
    );
    expect(html).toContain("variants.on must be a boolean");
    expect(html).toContain('value="yes"');
  });
});

describe("console flags: scheduling a default-rule change", () => {
  it("schedules a new rollout as the default rule (applied by the store when due), or a variant with on/off; one changing nothing is 422 with the values kept; 412 stale", async () => {
    const team = await consoleTeam("developer");
    await makeFlag(team, { key: "later" });
    const when = "2031-01-02T09:30";
    const form = {
      version: "1",
      environment: "production",
      enabled: "",
      at: when,
      serve: "rollout",
      bucket_by: "key",
      variant: ["on", "off"],
      percent: ["10", "90"],
    };
    expect((await post(team, "flags/later/scheduled", form)).headers.get("location")).toBe(`${at(team, "flags/later")}?notice=scheduled`);
    const [change] = (await json(await call("GET", "flags/later/scheduled-changes", { key: team.key }))).data;
    expect(change).toMatchObject({
      environment: "production",
      status: "pending",
      fallthrough: {
        rollout: {
          variations: [
            { variant: "on", weight: 10_000 },
            { variant: "off", weight: 90_000 },
          ],
        },
      },
    });
    expect(change.enabled).toBeUndefined();
    expect(await pageHtml(team, "later")).toContain("otherwise serve 10% on, 90% off");
    // Applied when due: the default rule changes, the environment's switch does not.
    expect(await flagStore(env, team.teamId).runDue(Date.parse(`${when}:00Z`))).toBe(1);
    const flag = await apiFlag(team, "later");
    expect(flag.environments.production).toMatchObject({ enabled: false, fallthrough: change.fallthrough });

    // A change that changes nothing: 422, the time and choices kept.
    const nothing = await refused(team, await post(team, "flags/later/scheduled", { ...form, version: "2", serve: "", enabled: "" }), 422, "later", 2);
    expect(nothing).toContain("Choose what the change does");
    expect(nothing).toContain(`value="${when}"`);
    // A rollout naming a variant the flag lacks is the API's 422.
    const unknown = await refused(team, await post(team, "flags/later/scheduled", { ...form, version: "2", variant: ["on", "maybe"] }), 422, "later", 2);
    expect(unknown).toContain("fallthrough.rollout.variations.1.variant must name one of the variants");
    await refused(team, await post(team, "flags/later/scheduled", { ...form, version: "1", serve: "variant:off" }), 412, "later", 2);

    expect((await post(team, "flags/later/scheduled", { ...form, version: "2", serve: "variant:off", enabled: "true", at: "2031-02-01T08:00" })).status).toBe(
      303,
    );
    const list = (await json(await call("GET", "flags/later/scheduled-changes", { key: team.key }))).data;
    expect(list.find((c: { status: string }) => c.status === "pending")).toMatchObject({ enabled: true, fallthrough: { variant: "off" } });
  });
});

describe("console flags: the new forms' roles and tenancy", () => {
  const forms: Array<[string, Record<string, string | string[]>]> = [
    [`${RULE}/clauses`, { version: "1", attribute: "plan", op: "in", values: "pro" }],
    [`${RULE}/clauses/remove`, { version: "1", clause: "0" }],
    [`${RULE}/serve`, { version: "1", serve: "variant:off" }],
    [`${RULE}/move`, { version: "1", direction: "down" }],
    [`${RULE}/description`, { version: "1", description: "x" }],
    ["flags/checkout/environments/production/rules", { version: "1", attribute: "plan", op: "in", values: "pro", serve: "variant:on" }],
    [
      "flags/checkout/variants",
      { version: "1", variant_original: ["on", "off"], variant_name: ["on", "off"], variant_value: ["true", "false"], remove: ["off"] },
    ],
    ["flags/checkout/scheduled", { version: "1", environment: "production", enabled: "", at: "2031-01-02T09:30", serve: "variant:off" }],
  ];

  it("a viewer sees none of them and each POST is 403, changing nothing", async () => {
    const team = await consoleTeam("owner");
    await countryFlag(team);
    const viewer = await memberOf(team.teamId, "viewer");
    const html = await (await page("GET", at(team, "flags/checkout"), { cookie: viewer.cookie })).text();
    for (const id of [
      "add-clause",
      "remove-clause",
      "edit-rule-serve",
      "edit-variants",
      "schedule-change",
      "move-rule-up",
      "move-rule-down",
      "edit-rule-description",
    ])
      expect(html).not.toContain(`data-testid="${id}"`);
    for (const [path, form] of forms) expect((await post(team, path, form, viewer.cookie)).status, path).toBe(403);
    expect((await apiFlag(team, "checkout")).version).toBe(1);
    expect((await json(await call("GET", "flags/checkout/scheduled-changes", { key: team.key }))).data).toEqual([]);
  });

  it("another team's flag answers 404 to each, changing nothing", async () => {
    const owner = await consoleTeam("owner");
    await countryFlag(owner);
    const intruder = await consoleTeam("owner");
    for (const [path, form] of forms) {
      // Through the intruder's own team (the flag is not in its store) and through the owner's team id (not a member).
      expect((await post(intruder, path, form)).status, path).toBe(404);
      expect((await post(owner, path, form, intruder.cookie)).status, path).toBe(404);
    }
    expect((await apiFlag(owner, "checkout")).version).toBe(1);
  });
});
