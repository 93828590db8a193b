// Forms CRUD over /api/v1/forms: create (Idempotency-Key, webhook secret once and sealed at rest),
// list with counts, read, change, delete; validation in the product's shape; scopes and tenancy.
import { describe, expect, it } from "vitest";
import { addKey, call, expectError, json, setupTeam } from "../../helpers/api";
import { createForm, env, postJson } from "./forms.helpers";

describe("forms CRUD", () => {
  it("creates a form with its endpoint and defaults, the webhook secret answered once and stored encrypted", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key, { webhook_url: "https://hooks.example.com/forms", notify_emails: ["Owner@Example.com"] });
    expect(form).toMatchObject({
      name: "Contact",
      endpoint: `http://app.test/f/${form.id}`,
      fields: null,
      allowed_origins: [],
      redirect_url: null,
      notify_emails: ["owner@example.com"],
      webhook_url: "https://hooks.example.com/forms",
      files: { enabled: false, max_bytes: 10 * 1024 * 1024 },
      retention_days: 90,
      enabled: true,
      submission_count: 0,
      spam_count: 0,
    });
    expect(form.webhook_secret).toMatch(/^whsec_/);
    const row = await env.DB.prepare("SELECT webhook_secret FROM forms WHERE id = ?").bind(form.id).first<{ webhook_secret: string }>();
    expect(row!.webhook_secret).not.toContain(form.webhook_secret!.slice(6));
    const got = await json(await call("GET", `forms/${form.id}`, { key }));
    expect(got.data).not.toHaveProperty("webhook_secret");
    const listed = await json(await call("GET", "forms", { key }));
    expect(listed.data.map((f: { id: string }) => f.id)).toEqual([form.id]);
    expect(listed.data[0]).not.toHaveProperty("webhook_secret");
  });

  it("replays a create with the same Idempotency-Key: one form", async () => {
    const { key } = await setupTeam();
    const headers = { "idempotency-key": crypto.randomUUID() };
    const a = await call("POST", "forms", { key, body: { name: "Once" }, headers });
    const b = await call("POST", "forms", { key, body: { name: "Once" }, headers });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect((await json(a)).data.id).toBe((await json(b)).data.id);
    expect((await json(await call("GET", "forms", { key }))).data).toHaveLength(1);
  });

  it("counts inbox and spam per form in the list and the read", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key);
    expect((await postJson(form.id, { email: "a@example.com" })).status).toBe(200);
    expect((await postJson(form.id, { email: "b@example.com", _gotcha: "bot" })).status).toBe(200);
    const got = (await json(await call("GET", `forms/${form.id}`, { key }))).data;
    expect({ inbox: got.submission_count, spam: got.spam_count }).toEqual({ inbox: 1, spam: 1 });
    const listed = (await json(await call("GET", "forms", { key }))).data;
    expect(listed[0].submission_count).toBe(1);
  });

  it("refuses bad input in the product's shape, storing nothing", async () => {
    const { key } = await setupTeam();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: "" }, "name"],
      [{ name: "x", allowed_origins: ["https://example.com/path"] }, "allowed_origins.0"],
      [{ name: "x", redirect_url: "javascript:alert(1)" }, "redirect_url"],
      [{ name: "x", webhook_url: "http://169.254.169.254/latest" }, "webhook_url"],
      [{ name: "x", webhook_url: "https://10.0.0.1/hook" }, "webhook_url"],
      [{ name: "x", notify_emails: ["stranger@example.org"] }, "notify_emails"],
      [
        {
          name: "x",
          fields: [
            { name: "a", type: "text" },
            { name: "a", type: "email" },
          ],
        },
        "fields",
      ],
      [{ name: "x", fields: [{ name: "_next", type: "text" }] }, "fields.0.name"],
      [{ name: "x", files: { enabled: true, max_bytes: 10 * 1024 * 1024 + 1 } }, "files.max_bytes"],
      [{ name: "x", retention_days: 0 }, "retention_days"],
      [{ name: "x", surprise: true }, "surprise"],
    ];
    for (const [body, field] of cases) {
      const res = await call("POST", "forms", { key, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      const error = await json(res);
      expect(error.error).toBe("Validation failed");
      expect(Object.keys(error.details), JSON.stringify(body)).toContain(field);
    }
    expect((await json(await call("GET", "forms", { key }))).data).toHaveLength(0);
  });

  it("changes a form; a webhook set later gets its secret once; null removes it", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key);
    expect(form.webhook_secret).toBeNull();
    const res = await call("PATCH", `forms/${form.id}`, {
      key,
      body: { webhook_url: "https://hooks.example.com/x", name: "Renamed", enabled: false, retention_days: 7 },
    });
    expect(res.status).toBe(200);
    const changed = (await json(res)).data;
    expect(changed).toMatchObject({ name: "Renamed", enabled: false, retention_days: 7, webhook_url: "https://hooks.example.com/x" });
    expect(changed.webhook_secret).toMatch(/^whsec_/);
    const again = (await json(await call("PATCH", `forms/${form.id}`, { key, body: { webhook_url: "https://hooks.example.com/y" } }))).data;
    expect(again).not.toHaveProperty("webhook_secret");
    const removed = (await json(await call("PATCH", `forms/${form.id}`, { key, body: { webhook_url: null } }))).data;
    expect(removed.webhook_url).toBeNull();
    const row = await env.DB.prepare("SELECT webhook_secret FROM forms WHERE id = ?").bind(form.id).first<{ webhook_secret: string | null }>();
    expect(row!.webhook_secret).toBeNull();
    await expectError(await call("PATCH", `forms/${form.id}`, { key, body: { notify_emails: ["nobody@example.org"] } }), 422, {
      error: "Validation failed",
      details: { notify_emails: ["nobody@example.org is not a member of the team who has accepted; only members receive form notifications"] },
    });
  });

  it("deletes a form: 204, then 404 everywhere, its public endpoint included", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key);
    expect((await call("DELETE", `forms/${form.id}`, { key })).status).toBe(204);
    await expectError(await call("GET", `forms/${form.id}`, { key }), 404, { error: "Form not found" });
    await expectError(await call("DELETE", `forms/${form.id}`, { key }), 404, { error: "Form not found" });
    const res = await postJson(form.id, { a: "b" });
    expect(res.status).toBe(404);
  });

  it("answers another team's form with 404 on every route", async () => {
    const owner = await setupTeam();
    const other = await setupTeam();
    const form = await createForm(owner.key);
    const sid = (await json(await postJson(form.id, { a: "b" }))).id as string;
    for (const [method, path] of [
      ["GET", `forms/${form.id}`],
      ["PATCH", `forms/${form.id}`],
      ["DELETE", `forms/${form.id}`],
      ["GET", `forms/${form.id}/submissions`],
      ["GET", `forms/${form.id}/submissions/export`],
      ["GET", `forms/${form.id}/submissions/${sid}`],
      ["DELETE", `forms/${form.id}/submissions/${sid}`],
      ["POST", `forms/${form.id}/submissions/${sid}/spam`],
      ["GET", `forms/${form.id}/deliveries`],
    ]) {
      const res = await call(method, path, { key: other.key, body: method === "PATCH" ? { name: "mine" } : undefined });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await json(await call("GET", `forms/${form.id}/submissions`, { key: owner.key }))).data).toHaveLength(1);
  });

  it("holds the scopes: forms:read reads only, forms:write includes read, other scopes see nothing", async () => {
    const { teamId, key } = await setupTeam();
    const form = await createForm(key);
    const read = await addKey(teamId, ["forms:read"]);
    const write = await addKey(teamId, ["forms:write"]);
    const none = await addKey(teamId, ["surveys:read"]);
    expect((await call("GET", "forms", { key: read.key })).status).toBe(200);
    await expectError(await call("POST", "forms", { key: read.key, body: { name: "x" } }), 403, { error: "Insufficient scope" });
    await expectError(await call("DELETE", `forms/${form.id}`, { key: read.key }), 403, { error: "Insufficient scope" });
    expect((await call("GET", `forms/${form.id}`, { key: write.key })).status).toBe(200);
    expect((await call("POST", "forms", { key: write.key, body: { name: "y" } })).status).toBe(201);
    await expectError(await call("GET", "forms", { key: none.key }), 403, { error: "Insufficient scope" });
    await expectError(await call("GET", "forms", {}), 401, { error: "Invalid or missing API key" });
  });

  it("shows the forms service in GET /usage with its plan limit, unlimited on enterprise", async () => {
    const pro = await setupTeam({ plan: "pro" });
    const usage = (await json(await call("GET", "usage", { key: pro.key }))).data;
    expect(usage.services.forms).toMatchObject({ metric: "submissions", limit: 50_000, unlimited: false });
    const ent = await setupTeam({ plan: "enterprise" });
    expect((await json(await call("GET", "usage", { key: ent.key }))).data.services.forms).toMatchObject({ limit: null, unlimited: true });
  });
});
