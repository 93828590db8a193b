// Keys in the console and over the API (DESIGN.md "Keys over the API"): the page's list, create
// with the scope picker and presets, the plaintext once, revocation behind a confirmation that
// ends the key at once; roles (a viewer reads only); another team's ids; scope escalation and the
// mail-policy rules of self-service keys; the per-team cap under parallel requests.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { apiKeys } from "../../src/db/schema";
import { newKey } from "../../src/platform/admin/admin.service";
import { MAX_KEYS_PER_TEAM } from "../../src/platform/keys/keys.service";
import { DEFAULT_SANDBOX_CAPS } from "../../src/platform/config";
import { keyScopes, specScopes } from "../../src/platform/scopes";
import { addKey, admin, call, expectError, json, setupTeam } from "../helpers/api";
import { consoleTeam, followRedirect, memberOf, page } from "../helpers/console";

const NEW_KEY = /data-testid="new-key">\s*(edp_[A-Za-z0-9_-]{43})/;

describe("the keys page", () => {
  it("creates a key with two scopes, shows its plaintext once, and the key works against the API", async () => {
    const team = await consoleTeam("developer");
    const path = `/console/teams/${team.teamId}/keys`;
    const form = await page("GET", path, { cookie: team.cookie });
    const html = await form.text();
    expect(html).toContain('data-testid="create-key"');
    for (const scope of keyScopes()) expect(html).toContain(`name="scopes" value="${scope}"`);
    for (const preset of ["Full access", "Read only", "Sending only"]) expect(html).toContain(preset);

    const created = await page("POST", path, {
      cookie: team.cookie,
      form: { name: "CI", scopes: ["logs:read", "logs:write"], allowed_streams: ["transactional", "broadcast"] },
    });
    // Post/redirect/get: 303 to the keys page, the plaintext shown there once through the flash.
    expect(created.status).toBe(303);
    expect(created.headers.get("location")).toBe(`${path}?notice=created`);
    const shown = await followRedirect(created, team.cookie);
    expect(shown.headers.get("cache-control")).toBe("no-store");
    const key = NEW_KEY.exec(await shown.text())?.[1];
    expect(key).toBeDefined();
    // A reload of that page shows the key no more, and creates nothing.
    const reloaded = await (await page("GET", `${path}?notice=created`, { cookie: team.cookie })).text();
    expect(reloaded).not.toContain(key);
    expect(reloaded).toContain("shown once");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE team_id = ?").bind(team.teamId).first("n")).toBe(2);
    expect((await call("GET", "logs/projects", { key })).status).toBe(200);
    expect((await call("GET", "surveys", { key })).status).toBe(403);

    // The list shows the key by prefix, never its plaintext again.
    const list = await (await page("GET", path, { cookie: team.cookie })).text();
    expect(list).not.toContain(key);
    expect(list).toContain(key!.slice(0, 12));
    expect(list.match(/data-testid="key-row"/g)).toHaveLength(2);
    const row = await getDb(env.DB).query.apiKeys.findFirst({ where: (k, { eq }) => eq(k.prefix, key!.slice(0, 12)) });
    expect(row).toMatchObject({ name: "CI", scopes: ["logs:read", "logs:write"], teamId: team.teamId });
    expect(row!.mail).toMatchObject({ sandbox: false, suspended: false, hourly_cap: null });
  });

  it("answers 422 with the form and what to fix, and creates nothing", async () => {
    const team = await consoleTeam("owner");
    const path = `/console/teams/${team.teamId}/keys`;
    const forms: Record<string, string>[] = [
      { name: "", scopes: "logs:read" },
      { name: "x" },
      { name: "x", scopes: "root:all" },
      { name: "x", scopes: "logs:read", allowed_recipients: "not-an-address" },
    ];
    for (const form of forms) {
      const res = await page("POST", path, { cookie: team.cookie, form: { allowed_streams: "transactional", ...form } });
      expect(res.status, JSON.stringify(form)).toBe(422);
      expect(await res.text()).toContain('class="errors"');
    }
    expect(await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE team_id = ?").bind(team.teamId).first("n")).toBe(1);
  });

  it("a preset button without JavaScript answers the form with the preset's scopes ticked, and creates nothing", async () => {
    const team = await consoleTeam("owner");
    const res = await page("POST", `/console/teams/${team.teamId}/keys`, { cookie: team.cookie, form: { name: "Mailer", preset: "sending" } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toMatch(/value="mail:send" checked=""/);
    expect(html).not.toMatch(/value="logs:read" checked=""/);
    expect(html).toContain('value="Mailer"');
    expect(await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE team_id = ?").bind(team.teamId).first("n")).toBe(1);
  });

  it("revokes only after a confirmation; the key answers 401 at once, even from this isolate's cache", async () => {
    const team = await consoleTeam("developer");
    const victim = await addKey(team.teamId, ["logs:read"]);
    expect((await call("GET", "logs/projects", { key: victim.key })).status).toBe(200); // now cached
    const revokePath = `/console/teams/${team.teamId}/keys/${victim.id}/revoke`;
    const ask = await page("POST", revokePath, { cookie: team.cookie });
    expect(ask.status).toBe(200);
    expect(await ask.text()).toContain('data-testid="confirm-revoke"');
    expect((await call("GET", "logs/projects", { key: victim.key })).status).toBe(200);
    const done = await page("POST", revokePath, { cookie: team.cookie, form: { confirm: "yes" } });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`/console/teams/${team.teamId}/keys?notice=revoked`);
    expect((await call("GET", "logs/projects", { key: victim.key })).status).toBe(401);
    const after = await (await page("GET", done.headers.get("location")!, { cookie: team.cookie })).text();
    expect(after).toContain("The key was revoked");
    expect(after).not.toContain(`data-key-id="${victim.id}"`);
  });

  it("another team's key id answers 404 and revokes nothing", async () => {
    const team = await consoleTeam("owner");
    const other = await setupTeam();
    for (const confirm of ["", "yes"]) {
      const res = await page("POST", `/console/teams/${team.teamId}/keys/${other.keyId}/revoke`, { cookie: team.cookie, form: { confirm } });
      expect(res.status).toBe(404);
    }
    expect((await call("GET", "logs/projects", { key: other.key })).status).toBe(200);
  });

  it("a viewer sees the list but no form, and every POST of a viewer is 403", async () => {
    const team = await consoleTeam("owner");
    const viewer = await memberOf(team.teamId, "viewer");
    const path = `/console/teams/${team.teamId}/keys`;
    const html = await (await page("GET", path, { cookie: viewer.cookie })).text();
    expect(html).toContain('data-testid="key-row"');
    expect(html).not.toContain('data-testid="create-key"');
    expect(html).not.toContain('data-testid="revoke-key"');
    expect((await page("POST", path, { cookie: viewer.cookie, form: { name: "x", scopes: "logs:read", allowed_streams: "transactional" } })).status).toBe(403);
    expect((await page("POST", `${path}/${team.keyId}/revoke`, { cookie: viewer.cookie, form: { confirm: "yes" } })).status).toBe(403);
    expect((await call("GET", "logs/projects", { key: team.key })).status).toBe(200);
  });

  it("records key creation and revocation with who did it", async () => {
    const team = await consoleTeam("owner");
    const path = `/console/teams/${team.teamId}/keys`;
    const created = await page("POST", path, { cookie: team.cookie, form: { name: "Recorded", scopes: "logs:read", allowed_streams: "transactional" } });
    expect(created.status).toBe(303);
    const row = await env.DB.prepare("SELECT id FROM api_keys WHERE team_id = ? AND name = 'Recorded'").bind(team.teamId).first<{ id: string }>();
    await page("POST", `${path}/${row!.id}/revoke`, { cookie: team.cookie, form: { confirm: "yes" } });
    const actions = await env.DB.prepare("SELECT actor, action FROM console_actions WHERE team_id = ? AND action LIKE 'key_%' ORDER BY created_at")
      .bind(team.teamId)
      .all();
    expect(actions.results).toEqual([
      { actor: team.email, action: "key_created" },
      { actor: team.email, action: "key_revoked" },
    ]);
  });
});

describe("/api/v1/keys", () => {
  it("no default key holds keys:write: the specification's scopes (every default key's) exclude the extension scopes", () => {
    expect(specScopes()).not.toContain("keys:write");
    expect(specScopes()).not.toContain("keys:read");
  });

  it("lists the team's keys without secrets, with last_used_at; needs keys:read (or keys:write)", async () => {
    const team = await setupTeam({ scopes: ["keys:read"] });
    const res = await call("GET", "keys", { key: team.key });
    expect(res.status).toBe(200);
    const { data } = await json(res);
    expect(data).toHaveLength(1);
    expect(Object.keys(data[0]).sort()).toEqual(["created_at", "id", "last_used_at", "mail", "name", "prefix", "scopes"]);
    const writer = await addKey(team.teamId, ["keys:write"]);
    expect((await call("GET", "keys", { key: writer.key })).status).toBe(200);
    const other = await addKey(team.teamId, [...specScopes()]);
    await expectError(await call("GET", "keys", { key: other.key }), 403, { error: "Insufficient scope" });
  });

  it("a key creates keys only with scopes it holds (403 otherwise, nothing created)", async () => {
    const team = await setupTeam({ scopes: ["keys:write", "logs:read"] });
    const ok = await call("POST", "keys", { key: team.key, body: { name: "child", scopes: ["logs:read"] } });
    expect(ok.status).toBe(201);
    const child = (await json(ok)).data;
    expect(child.key).toMatch(/^edp_/);
    expect((await call("GET", "logs/projects", { key: child.key })).status).toBe(200);
    // keys:write implies keys:read, so that may be granted too.
    expect((await call("POST", "keys", { key: team.key, body: { scopes: ["keys:read"] } })).status).toBe(201);
    for (const scopes of [["logs:write"], ["logs:read", "mail:send"], ["billing:read"]]) {
      await expectError(await call("POST", "keys", { key: team.key, body: { scopes } }), 403, {
        error: `A key cannot grant scopes it does not hold: ${scopes.filter((s) => s !== "logs:read").join(", ")}`,
      });
    }
    expect(await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE team_id = ?").bind(team.teamId).first("n")).toBe(3);
  });

  it("refuses what a team may not set itself (caps, suspension) and unknown scopes with 422", async () => {
    const team = await setupTeam({ scopes: [...keyScopes()] });
    for (const body of [
      { scopes: ["logs:read"], mail: { hourly_cap: 1000 } },
      { scopes: ["logs:read"], mail: { suspended: false } },
      { scopes: ["root"] },
      { scopes: [] },
      { scopes: ["logs:read"], extra: true },
    ]) {
      expect((await call("POST", "keys", { key: team.key, body })).status, JSON.stringify(body)).toBe(422);
    }
  });

  it("a sandbox key makes only sandbox keys, with streams no wider than its own and its caps", async () => {
    const team = await setupTeam({
      scopes: ["keys:write", "mail:send"],
      mail: { sandbox: true, allowed_streams: ["transactional"], allowed_recipients: ["qa@example.com", "dev@example.com"], hourly_cap: 10, daily_cap: 50 },
    });
    await expectError(await call("POST", "keys", { key: team.key, body: { scopes: ["mail:send"], mail: { sandbox: false } } }), 403, {
      error: "A sandbox key can only create sandbox keys",
    });
    await expectError(
      await call("POST", "keys", { key: team.key, body: { scopes: ["mail:send"], mail: { allowed_streams: ["transactional", "broadcast"] } } }),
      403,
      {
        error: "A key cannot grant streams it does not hold: broadcast",
      },
    );
    const res = await call("POST", "keys", { key: team.key, body: { scopes: ["mail:send"], mail: { allowed_recipients: ["qa@example.com"] } } });
    expect(res.status).toBe(201);
    expect((await json(res)).data.mail).toEqual({
      sandbox: true,
      allowed_streams: ["transactional"],
      allowed_recipients: ["qa@example.com"],
      hourly_cap: 10,
      daily_cap: 50,
      suspended: false,
    });
  });

  it("while a sandbox key of the team is suspended, a new sandbox key starts suspended (a live one does not), and no team lifts it", async () => {
    const team = await setupTeam({ scopes: [...keyScopes()] });
    const sandbox = await addKey(team.teamId, ["mail:send"], { sandbox: true });
    expect((await admin("PATCH", `keys/${sandbox.id}`, { mail: { suspended: true } })).status).toBe(200);
    const made = await call("POST", "keys", { key: team.key, body: { scopes: ["mail:send"], mail: { sandbox: true } } });
    expect((await json(made)).data.mail.suspended).toBe(true);
    const live = await call("POST", "keys", { key: team.key, body: { scopes: ["mail:send"] } });
    expect((await json(live)).data.mail).toMatchObject({ sandbox: false, suspended: false });
    // The console's form takes the same path.
    const owner = await memberOf(team.teamId, "owner");
    const page1 = await page("POST", `/console/teams/${team.teamId}/keys`, {
      cookie: owner.cookie,
      form: { name: "sb", scopes: "mail:send", sandbox: "on", allowed_streams: "transactional" },
    });
    expect(page1.status).toBe(303);
    const row = await env.DB.prepare("SELECT mail FROM api_keys WHERE team_id = ? AND name = 'sb'").bind(team.teamId).first<{ mail: string }>();
    expect(JSON.parse(row!.mail).suspended).toBe(true);
  });

  it("DELETE revokes the team's key (204, then 401); another team's or an unknown id answers 404", async () => {
    const team = await setupTeam({ scopes: ["keys:write", "logs:read"] });
    const other = await setupTeam();
    const victim = await addKey(team.teamId, ["logs:read"]);
    expect((await call("GET", "logs/projects", { key: victim.key })).status).toBe(200);
    await expectError(await call("DELETE", `keys/${other.keyId}`, { key: team.key }), 404, { error: "Key not found" });
    await expectError(await call("DELETE", `keys/${crypto.randomUUID()}`, { key: team.key }), 404, { error: "Key not found" });
    await expectError(await call("DELETE", "keys/not-a-uuid", { key: team.key }), 404, { error: "Key not found" });
    expect((await call("GET", "logs/projects", { key: other.key })).status).toBe(200);
    expect((await call("DELETE", `keys/${victim.id}`, { key: team.key })).status).toBe(204);
    expect((await call("GET", "logs/projects", { key: victim.key })).status).toBe(401);
    await expectError(await call("DELETE", `keys/${victim.id}`, { key: team.key }), 404, { error: "Key not found" });
  });

  it(`holds the cap of ${MAX_KEYS_PER_TEAM} keys per team under parallel creates`, async () => {
    const team = await setupTeam({ scopes: ["keys:write", "logs:read"] });
    const rows = [];
    for (let i = 0; i < MAX_KEYS_PER_TEAM - 5; i++) rows.push(newKey(team.teamId, { scopes: ["logs:read"] }));
    const db = getDb(env.DB);
    const built = await Promise.all(rows);
    for (let i = 0; i < built.length; i += 10) await db.insert(apiKeys).values(built.slice(i, i + 10).map((b) => b.values));
    const answers = await Promise.all(Array.from({ length: 12 }, () => call("POST", "keys", { key: team.key, body: { scopes: ["logs:read"] } })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(4); // 96 held (95 + the team's own)
    expect(statuses.filter((s) => s === 422)).toHaveLength(8);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE team_id = ? AND revoked_at IS NULL").bind(team.teamId).first("n")).toBe(
      MAX_KEYS_PER_TEAM,
    );
  });
});

describe("a key mints only what it holds (regression, issue 37 finding 2)", () => {
  it("recipients: a sandbox key allowed only qa@a.test cannot mint one allowed victim@gmail.com; a child inherits its creator's list", async () => {
    const team = await setupTeam({
      scopes: ["keys:write", "mail:send"],
      mail: { sandbox: true, allowed_streams: ["transactional"], allowed_recipients: ["qa@a.test"] },
    });
    await expectError(
      await call("POST", "keys", { key: team.key, body: { scopes: ["mail:send"], mail: { allowed_recipients: ["qa@a.test", "victim@gmail.com"] } } }),
      403,
      { error: "A key cannot grant recipients it does not hold: victim@gmail.com" },
    );
    const same = await call("POST", "keys", { key: team.key, body: { scopes: ["mail:send"], mail: { allowed_recipients: ["QA@a.test"] } } });
    expect(same.status).toBe(201);
    const inherited = await json(await call("POST", "keys", { key: team.key, body: { scopes: ["mail:send"] } }));
    expect(inherited.data.mail.allowed_recipients).toEqual(["qa@a.test"]);
    // A sandbox key with an empty list holds no recipient but the simulator: it grants none.
    const empty = await setupTeam({ scopes: ["keys:write", "mail:send"], mail: { sandbox: true, allowed_streams: ["transactional"] } });
    expect((await call("POST", "keys", { key: empty.key, body: { scopes: ["mail:send"], mail: { allowed_recipients: ["victim@gmail.com"] } } })).status).toBe(
      403,
    );
  });

  it("recipients: a live key without a list bounds nothing there; a live key with a list bounds its children", async () => {
    const open = await setupTeam({ scopes: ["keys:write", "mail:send"] });
    expect(
      (await call("POST", "keys", { key: open.key, body: { scopes: ["mail:send"], mail: { sandbox: true, allowed_recipients: ["anyone@example.com"] } } }))
        .status,
    ).toBe(201);
    const listed = await setupTeam({ scopes: ["keys:write", "mail:send"], mail: { allowed_recipients: ["a@example.com"] } });
    expect(
      (await call("POST", "keys", { key: listed.key, body: { scopes: ["mail:send"], mail: { sandbox: true, allowed_recipients: ["b@example.com"] } } })).status,
    ).toBe(403);
  });

  it("streams: a live key limited to transactional cannot mint one that sends on broadcast; its children inherit its streams", async () => {
    const team = await setupTeam({ scopes: ["keys:write", "mail:send"], mail: { allowed_streams: ["transactional"] } });
    await expectError(await call("POST", "keys", { key: team.key, body: { scopes: ["mail:send"], mail: { allowed_streams: ["broadcast"] } } }), 403, {
      error: "A key cannot grant streams it does not hold: broadcast",
    });
    const child = await json(await call("POST", "keys", { key: team.key, body: { scopes: ["mail:send"] } }));
    expect(child.data.mail.allowed_streams).toEqual(["transactional"]);
  });

  it("revocation: a key revokes only keys whose scopes it holds (a keys:write-only key cannot revoke a full-access key)", async () => {
    const team = await setupTeam({ scopes: [...keyScopes()] });
    const writer = await addKey(team.teamId, ["keys:write"]);
    const narrow = await addKey(team.teamId, ["keys:read"]);
    await expectError(await call("DELETE", `keys/${team.keyId}`, { key: writer.key }), 403, {
      error: `A key cannot revoke a key with scopes it does not hold: ${keyScopes()
        .filter((s) => s !== "keys:write" && s !== "keys:read")
        .join(", ")}`,
    });
    expect((await call("GET", "keys", { key: team.key })).status).toBe(200);
    expect((await call("DELETE", `keys/${narrow.id}`, { key: writer.key })).status).toBe(204);
    expect((await call("DELETE", `keys/${writer.id}`, { key: writer.key })).status).toBe(204);
  });

  it("self-service sandbox keys get the team's caps: a member's from the console, a key's no higher than its creator's", async () => {
    const team = await consoleTeam("developer");
    const res = await page("POST", `/console/teams/${team.teamId}/keys`, {
      cookie: team.cookie,
      form: { name: "sb", scopes: "mail:send", sandbox: "on", allowed_streams: "transactional" },
    });
    expect(res.status).toBe(303);
    const row = await env.DB.prepare("SELECT mail FROM api_keys WHERE team_id = ? AND name = 'sb'").bind(team.teamId).first<{ mail: string }>();
    expect(JSON.parse(row!.mail)).toMatchObject({ sandbox: true, hourly_cap: DEFAULT_SANDBOX_CAPS.hourly, daily_cap: DEFAULT_SANDBOX_CAPS.daily });
    const capless = await addKey(team.teamId, ["keys:write", "mail:send"], { sandbox: true });
    const child = await json(await call("POST", "keys", { key: capless.key, body: { scopes: ["mail:send"] } }));
    expect(child.data.mail).toMatchObject({ hourly_cap: DEFAULT_SANDBOX_CAPS.hourly, daily_cap: DEFAULT_SANDBOX_CAPS.daily });
    const capped = await addKey(team.teamId, ["keys:write", "mail:send"], { sandbox: true, hourly_cap: 7 });
    const grandchild = await json(await call("POST", "keys", { key: capped.key, body: { scopes: ["mail:send"] } }));
    expect(grandchild.data.mail).toMatchObject({ hourly_cap: 7, daily_cap: DEFAULT_SANDBOX_CAPS.daily });
  });

  it("suspension is the team's: revoking every suspended sandbox key and minting again sheds nothing; only the operator clears it", async () => {
    const team = await setupTeam({ scopes: [...keyScopes()] });
    const sandbox = await addKey(team.teamId, ["mail:send"], { sandbox: true, allowed_recipients: ["dev@example.com"] });
    expect((await admin("PATCH", `keys/${sandbox.id}`, { mail: { suspended: true } })).status).toBe(200);
    expect((await call("DELETE", `keys/${sandbox.id}`, { key: team.key })).status).toBe(204);
    const made = await json(await call("POST", "keys", { key: team.key, body: { scopes: ["mail:send"], mail: { sandbox: true } } }));
    expect(made.data.mail.suspended).toBe(true);
    const sent = await call("POST", "emails", {
      key: made.data.key,
      body: { from: "t@sandbox.edge-platform.dev", to: "delivered@sandbox.edge-platform.dev", subject: "s", text: "t", stream: "transactional" },
    });
    expect((await json(sent)).code).toBe("sandbox_disabled");
    // The operator lifts it on a key of the team: the team's suspension ends with it.
    expect((await admin("PATCH", `keys/${made.data.id}`, { mail: { suspended: false } })).status).toBe(200);
    const next = await json(await call("POST", "keys", { key: team.key, body: { scopes: ["mail:send"], mail: { sandbox: true } } }));
    expect(next.data.mail.suspended).toBe(false);
  });

  it("migration 0031 moves a suspension kept on a key alone (before 0027) to its team, revoked keys included", async () => {
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0031_"));
    expect(migration, "migrations/0031_sandbox_suspension_backfill.sql").toBeDefined();
    const run = () => env.DB.batch(migration!.queries.map((q) => env.DB.prepare(q)));
    const suspendedAt = (teamId: string) =>
      env.DB.prepare("SELECT sandbox_suspended_at AS at FROM teams WHERE id = ?").bind(teamId).first<{ at: string | null }>();
    // As a database before 0027 held it: the key suspended, revoked, the team not.
    const shed = await setupTeam({ scopes: [...keyScopes()] });
    const old = await addKey(shed.teamId, ["mail:send"], { sandbox: true, allowed_recipients: ["dev@example.com"] });
    await env.DB.prepare("UPDATE api_keys SET mail = json_set(mail, '$.suspended', json('true')), revoked_at = ? WHERE id = ?")
      .bind(new Date().toISOString(), old.id)
      .run();
    await env.DB.prepare("UPDATE teams SET sandbox_suspended_at = NULL WHERE id = ?").bind(shed.teamId).run();
    // A team whose sandbox key was never suspended, and one with a suspended key that is not a sandbox key.
    const clean = await setupTeam({ scopes: [...keyScopes()] });
    await addKey(clean.teamId, ["mail:send"], { sandbox: true, allowed_recipients: ["dev@example.com"] });
    const live = await setupTeam({ scopes: [...keyScopes()] });
    const liveKey = await addKey(live.teamId, ["mail:send"], {});
    await env.DB.prepare("UPDATE api_keys SET mail = json_set(mail, '$.suspended', json('true')) WHERE id = ?").bind(liveKey.id).run();
    // An earlier suspension is kept as it was.
    const earlier = await setupTeam({ scopes: [...keyScopes()] });
    const earlierKey = await addKey(earlier.teamId, ["mail:send"], { sandbox: true, allowed_recipients: ["dev@example.com"] });
    await env.DB.prepare("UPDATE api_keys SET mail = json_set(mail, '$.suspended', json('true')) WHERE id = ?").bind(earlierKey.id).run();
    await env.DB.prepare("UPDATE teams SET sandbox_suspended_at = '2026-01-01T00:00:00.000Z' WHERE id = ?").bind(earlier.teamId).run();

    await run();
    expect(Date.parse((await suspendedAt(shed.teamId))!.at ?? "")).toBeGreaterThan(Date.parse("2026-01-02T00:00:00Z"));
    expect((await suspendedAt(clean.teamId))!.at).toBeNull();
    expect((await suspendedAt(live.teamId))!.at).toBeNull();
    expect((await suspendedAt(earlier.teamId))!.at).toBe("2026-01-01T00:00:00.000Z");
    // So a key minted now is born suspended.
    const made = await json(await call("POST", "keys", { key: shed.key, body: { scopes: ["mail:send"], mail: { sandbox: true } } }));
    expect(made.data.mail.suspended).toBe(true);
  });
});
