// Email bodies in R2 (issue 27): a send writes one object per email before its row, the row keeps
// no body, GET /emails/:id, the list and the consumer read it back; a failed R2 write answers 500
// with nothing stored; a failed row insert deletes the objects; retention deletes objects with rows;
// the operator's migration moves bodies of rows stored before, in repeatable steps.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../../src/env";
import { setClock } from "../../../src/platform/clock";
import { DELIVERY_LOG_RETENTION_DAYS } from "../../../src/platform/retention";
import { bodyKey } from "../../../src/products/mail/mail.bodies";
import { mailSendsConsumer } from "../../../src/products/mail/mail.consumer";
import { mailRetention } from "../../../src/products/mail/mail.cron";
import { admin, call, expectError, json, setupTeam } from "../../helpers/api";
import { created, fakeBatch, LIVE, postSettled, recordingEnv, send, sendBatch } from "./mail-helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

const row = (id: string) =>
  env.DB.prepare("SELECT body_in_r2, html, text FROM emails WHERE id = ?").bind(id).first<{ body_in_r2: number; html: string | null; text: string | null }>();
const teamRows = async (teamId: string) => (await env.DB.prepare("SELECT count(*) AS n FROM emails WHERE team_id = ?").bind(teamId).first<{ n: number }>())!.n;
const teamObjects = async (teamId: string) => (await env.MAIL_BODIES.list({ prefix: `emails/${teamId}/` })).objects.map((o) => o.key);
const used = async (key: string) => (await json(await call("GET", "usage", { key }))).data.services.mail.used;

/** MAIL_BODIES whose `put` fails from the `failFrom`-th call on (1-based); reads and deletes go to the real bucket. */
function failingPuts(failFrom: number): { env: Env; puts: string[] } {
  const puts: string[] = [];
  const bucket = {
    put: async (key: string, value: string, options?: R2PutOptions) => {
      puts.push(key);
      if (puts.length >= failFrom) throw new Error("R2: internal error");
      return env.MAIL_BODIES.put(key, value, options);
    },
    get: (key: string) => env.MAIL_BODIES.get(key),
    delete: (keys: string | string[]) => env.MAIL_BODIES.delete(keys),
  } as unknown as R2Bucket;
  return { env: { ...(env as Env), MAIL_BODIES: bucket }, puts };
}

describe("bodies in R2", () => {
  it("a send writes the body to R2 under the email's id, not to its row; GET, the list and the send answer read it back", async () => {
    const team = await setupTeam();
    const sent = await created(await send(team.key, { ...LIVE, html: "<p>Hello é</p>", text: "Hello é" }));
    expect(sent).toMatchObject({ html: "<p>Hello é</p>", text: "Hello é" });
    expect(await row(sent.id)).toEqual({ body_in_r2: 1, html: null, text: null });
    const object = await env.MAIL_BODIES.get(bodyKey(team.teamId, sent.id));
    expect(await object!.json()).toEqual({ html: "<p>Hello é</p>", text: "Hello é" });

    const read = (await json(await call("GET", `emails/${sent.id}`, { key: team.key }))).data;
    expect(read).toMatchObject({ id: sent.id, html: "<p>Hello é</p>", text: "Hello é" });
    const list = (await json(await call("GET", "emails", { key: team.key }))).data;
    expect(list.find((e: { id: string }) => e.id === sent.id)).toMatchObject({ html: "<p>Hello é</p>", text: "Hello é" });

    // No body at all is an object too, read back as nulls.
    const bare = await created(await send(team.key, { from: LIVE.from, to: LIVE.to, subject: "No body", stream: "transactional" }));
    expect((await json(await call("GET", `emails/${bare.id}`, { key: team.key }))).data).toMatchObject({ html: null, text: null });
    expect(await teamObjects(team.teamId)).toHaveLength(2);
  });

  it("a batch writes one object per email; another team reads none of them", async () => {
    const team = await setupTeam();
    const other = await setupTeam();
    const res = await sendBatch(team.key, [
      { ...LIVE, text: "one" },
      { ...LIVE, html: "<b>two</b>" },
    ]);
    const data = await created(res);
    expect(data.map((e: { text: string | null; html: string | null }) => [e.text, e.html])).toEqual([
      ["one", null],
      ["Hi", "<b>two</b>"],
    ]);
    expect((await teamObjects(team.teamId)).sort()).toEqual(data.map((e: { id: string }) => bodyKey(team.teamId, e.id)).sort());
    await expectError(await call("GET", `emails/${data[0].id}`, { key: other.key }), 404, { error: "Email not found" });
  });

  it("the consumer sends the body it reads from R2; an unreadable body is a failed attempt, retried", async () => {
    const team = await setupTeam();
    const recorder = recordingEnv();
    const res = await postSettled(team.key, "emails", { ...LIVE, html: "<i>from R2</i>" }, { env: recorder.env, withContext: false });
    const { id } = (await json(res)).data;
    // R2 lost the object: the attempt fails and the message is retried, the email still queued.
    await env.MAIL_BODIES.delete(bodyKey(team.teamId, id));
    const lost = fakeBatch(recorder.sent);
    await mailSendsConsumer.consume(lost.batch, recorder.env);
    expect(lost.messages[0].retry).toHaveBeenCalled();
    // Reading it answers 500 rather than an email without its body.
    expect((await call("GET", `emails/${id}`, { key: team.key })).status).toBe(500);
    const stored = await env.DB.prepare("SELECT status, attempts, last_error FROM emails WHERE id = ?")
      .bind(id)
      .first<{ status: string; attempts: number; last_error: string }>();
    expect(stored).toMatchObject({ status: "queued", attempts: 1 });
    expect(stored!.last_error).toMatch(/^the body could not be read from storage: .*mail body missing from R2/);

    // The object back: the next delivery sends it through the http transport with that body.
    await env.MAIL_BODIES.put(bodyKey(team.teamId, id), JSON.stringify({ html: "<i>from R2</i>", text: null }));
    await env.DB.prepare("UPDATE emails SET lease_until = NULL WHERE id = ?").bind(id).run();
    const bodies: unknown[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (_input, init) => {
      bodies.push(JSON.parse(String((init as RequestInit).body)));
      return Response.json({ id: "prov-1", status: "delivered" });
    });
    const again = fakeBatch(recorder.sent, 2);
    await mailSendsConsumer.consume(again.batch, { ...recorder.env, MAIL_TRANSPORT: "http", MAIL_HTTP_URL: "http://provider.test/send" });
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toMatchObject({ id, html: "<i>from R2</i>", text: null });
    expect((await json(await call("GET", `emails/${id}`, { key: team.key }))).data.status).toBe("delivered");
  });

  it("a failed R2 write answers 500 with nothing stored: no row, no object, no quota used", async () => {
    const team = await setupTeam();
    const single = failingPuts(1);
    const res = await postSettled(team.key, "emails", LIVE, { env: single.env });
    await expectError(res, 500, { error: "The email could not be stored; nothing was sent. Try again." });

    // A batch whose third write fails: the two written are deleted again.
    const batch = failingPuts(3);
    const many = await postSettled(team.key, "emails/batch", { emails: [LIVE, LIVE, LIVE, LIVE] }, { env: batch.env });
    await expectError(many, 500, { error: "The email could not be stored; nothing was sent. Try again." });
    expect(batch.puts.length).toBeGreaterThanOrEqual(3);
    expect(await teamRows(team.teamId)).toBe(0);
    expect(await teamObjects(team.teamId)).toEqual([]);
    expect(await used(team.key)).toBe(0);
    // And the next send works.
    await created(await send(team.key, LIVE));
    expect(await used(team.key)).toBe(1);
  });

  it("a row insert that fails after the objects were written deletes them and gives the quota back", async () => {
    const team = await setupTeam();
    await env.DB.prepare(
      "CREATE TRIGGER test_fail_email_insert BEFORE INSERT ON emails WHEN NEW.subject = 'fail-insert' BEGIN SELECT RAISE(ABORT, 'test: insert refused'); END",
    ).run();
    try {
      const res = await sendBatch(team.key, [LIVE, { ...LIVE, subject: "fail-insert" }]);
      expect(res.status).toBe(500);
    } finally {
      await env.DB.prepare("DROP TRIGGER test_fail_email_insert").run();
    }
    expect(await teamRows(team.teamId)).toBe(0);
    expect(await teamObjects(team.teamId)).toEqual([]);
    expect(await used(team.key)).toBe(0);
  });
});

describe("retention", () => {
  const T0 = Date.parse("2026-04-01T10:00:00.000Z");
  const LATER = T0 + (DELIVERY_LOG_RETENTION_DAYS + 1) * 86_400_000;

  it("deletes a finished email's body with its row; a queued one keeps both; an R2 failure keeps the rows for the next run", async () => {
    setClock(T0);
    const team = await setupTeam();
    // Settled: each first attempt is over before the test sets the statuses.
    const [done, failing, stuck] = await Promise.all([1, 2, 3].map(async () => created(await postSettled(team.key, "emails", LIVE))));
    await env.DB.prepare("UPDATE emails SET status = 'delivered' WHERE id IN (?, ?)").bind(done.id, failing.id).run();
    await env.DB.prepare("UPDATE emails SET status = 'queued' WHERE id = ?").bind(stuck.id).run();

    setClock(LATER);
    const broken = { ...(env as Env), MAIL_BODIES: { delete: async () => Promise.reject(new Error("R2: internal error")) } as unknown as R2Bucket };
    await mailRetention(broken);
    expect(await row(done.id)).not.toBeNull();
    expect(await teamObjects(team.teamId)).toHaveLength(3);

    const result = await mailRetention(env as Env);
    expect(result.emails).toBeGreaterThanOrEqual(2);
    expect(await row(done.id)).toBeNull();
    expect(await row(failing.id)).toBeNull();
    expect(await row(stuck.id)).not.toBeNull();
    expect(await teamObjects(team.teamId)).toEqual([bodyKey(team.teamId, stuck.id)]);
  });
});

describe("moving bodies of rows stored before (operator)", () => {
  const T = Date.parse("2026-02-01T00:00:00Z");

  /** Rows as they were stored before the move: the body in the row, `body_in_r2` false. */
  async function legacyRows(teamId: string, n: number): Promise<string[]> {
    const ids = Array.from({ length: n }, () => crypto.randomUUID());
    await env.DB.batch(
      ids.map((id, i) =>
        env.DB.prepare(
          `INSERT INTO emails (id, team_id, sandbox, stream, "from", "to", cc, bcc, reply_to, recipients, subject, html, text, headers, tags, status, attempts, created_at, updated_at)
           VALUES (?1, ?2, 0, 'transactional', 'hello@acme.dev', '["a@example.com"]', '[]', '[]', '[]', '["a@example.com"]', ?3, ?4, ?5, '{}', '[]', 'delivered', 1, ?6, ?6)`,
        ).bind(id, teamId, `old ${i}`, i % 2 ? null : `<p>old ${i}</p>`, `old ${i}`, new Date(T + i).toISOString()),
      ),
    );
    return ids;
  }
  const legacyCount = async () => (await env.DB.prepare("SELECT count(*) AS n FROM emails WHERE body_in_r2 = 0").first<{ n: number }>())!.n;

  async function migrateAll(limit: number) {
    const steps = [];
    for (;;) {
      const res = await admin("POST", "mail/migrate-bodies", { limit });
      expect(res.status).toBe(200);
      const step = (await json(res)).data;
      steps.push(step);
      if (!step.more) return steps;
    }
  }

  it("reads a row's own body before the move, moves every body in steps, reads the same after; repeating moves nothing", async () => {
    setClock(T + 60_000);
    const a = await setupTeam();
    const b = await setupTeam();
    const idsA = await legacyRows(a.teamId, 5);
    const idsB = await legacyRows(b.teamId, 2);
    const before = await Promise.all(idsA.map(async (id) => (await json(await call("GET", `emails/${id}`, { key: a.key }))).data));
    expect(before[0]).toMatchObject({ html: "<p>old 0</p>", text: "old 0" });
    expect(before[1]).toMatchObject({ html: null, text: "old 1" });

    const legacy = await legacyCount();
    const steps = await migrateAll(2);
    expect(steps.reduce((n, s) => n + s.moved, 0)).toBe(legacy);
    expect(await legacyCount()).toBe(0);
    expect(await row(idsA[0])).toEqual({ body_in_r2: 1, html: null, text: null });
    expect((await teamObjects(a.teamId)).sort()).toEqual(idsA.map((id) => bodyKey(a.teamId, id)).sort());
    expect((await teamObjects(b.teamId)).sort()).toEqual(idsB.map((id) => bodyKey(b.teamId, id)).sort());
    const after = await Promise.all(idsA.map(async (id) => (await json(await call("GET", `emails/${id}`, { key: a.key }))).data));
    expect(after).toEqual(before);

    expect(await migrateAll(25)).toEqual([{ moved: 0, more: false }]);
  });

  it("a step whose R2 writes fail answers 503 and leaves the rows as they were; one that stops before marking the rows is repeated", async () => {
    setClock(T + 60_000);
    await migrateAll(25); // what other tests left
    const team = await setupTeam();
    const ids = await legacyRows(team.teamId, 3);
    const failPut = vi.spyOn(env.MAIL_BODIES, "put").mockImplementation(async () => Promise.reject(new Error("R2: internal error")));
    await expectError(await admin("POST", "mail/migrate-bodies", {}), 503, {
      error: "The mail body bucket did not answer; nothing was moved, run the step again",
    });
    failPut.mockRestore();
    expect(await row(ids[0])).toEqual({ body_in_r2: 0, html: "<p>old 0</p>", text: "old 0" });
    expect(await teamObjects(team.teamId)).toEqual([]);

    const realPrepare = env.DB.prepare.bind(env.DB);
    const failMark = vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
      if (query.startsWith("UPDATE emails SET body_in_r2 = 1")) throw new Error("D1 unavailable");
      return realPrepare(query);
    });
    expect((await admin("POST", "mail/migrate-bodies", {})).status).toBe(500);
    failMark.mockRestore();
    expect(await legacyCount()).toBe(3);
    expect(await teamObjects(team.teamId)).toHaveLength(3);
    await migrateAll(25);
    expect(await legacyCount()).toBe(0);
    expect((await json(await call("GET", `emails/${ids[2]}`, { key: team.key }))).data).toMatchObject({ html: "<p>old 2</p>", text: "old 2" });
  });

  it("needs the operator token and a limit within bounds", async () => {
    const team = await setupTeam();
    await expectError(await call("POST", "admin/mail/migrate-bodies", { key: team.key, body: {} }), 401, { error: "Invalid or missing admin token" });
    await expectError(await admin("POST", "mail/migrate-bodies", { limit: 0 }), 422, expect.anything());
    await expectError(await admin("POST", "mail/migrate-bodies", { limit: 26 }), 422, expect.anything());
  });
});
