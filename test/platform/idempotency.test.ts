// Idempotent retries (src/platform/idempotency.ts): replays without a second piece of work, 422 for
// a reused key in each product's error shape, one execution under parallel duplicates, 409 while
// the first runs, per-team keys, key syntax, which answers are kept, 5xx and thrown errors giving
// the key back, retention, and the header in the OpenAPI document of every idempotent operation.
import { createScheduledController, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { setClock } from "../../src/platform/clock";
import { decryptBytes } from "../../src/platform/crypto";
import { IDEMPOTENCY_LEASE_MS, idempotencyRetention, STORED_BODY_CAP } from "../../src/platform/idempotency";
import { RETENTION_CHUNK } from "../../src/platform/retention";
import worker from "../../src/index";
import { call, expectError, json, setupTeam, type TestTeam } from "../helpers/api";
import { LIMITS } from "../../src/products/mail/mail.policy";
import { LIVE, recordingEnv, sandboxTeam, SANDBOX_MAIL } from "../products/mail/mail-helpers";
import { browserSubscription, createApp, subscribe } from "../products/push/push-helpers";
import { createDestination, createSource, ingest, storeSql } from "../products/relay/relay.helpers";
import { createSurvey } from "../products/surveys/helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

const T0 = Date.parse("2026-05-04T08:00:00.000Z");
const HOUR = 3_600_000;

/**
 * The POSTs that create work, as Hono paths under /api/v1: each route declares `idempotent: true`
 * (src/platform/route-access.ts), and the document must name the header on exactly these.
 */
const IDEMPOTENT_ROUTES = [
  "/emails",
  "/emails/batch",
  "/webhooks",
  "/domains",
  "/push/apps",
  "/push/apps/:app_id/notifications",
  "/webhooks/sources",
  "/webhooks/sources/:source_id/destinations",
  "/webhooks/sources/:source_id/events/:event_id/replay",
  "/orgs/:org_id/projects/:project_id/audit/findings",
  "/orgs/:org_id/projects/:project_id/audit/reports/export",
  "/orgs/:org_id/projects/:project_id/audit/reports/share",
  "/logs/projects",
  "/logs/projects/:id/alerts",
  "/surveys",
  "/surveys/:id/duplicate",
  "/surveys/:id/webhooks",
  "/orgs/:org_id/projects/:project_id/audit/scans",
  "/orgs/:org_id/projects/:project_id/audit/scan-schedules",
  "/forms",
  "/forms/:id/submissions/:sid/resend",
  "/analytics/sites",
  "/flags",
  "/flags/segments",
  "/flags/environments",
  "/flags/environments/:env/client-keys",
  "/flags/:key/scheduled-changes",
] as const;

function withKey(key: string, extra: Record<string, string> = {}) {
  return { "idempotency-key": key, ...extra };
}

async function count(sql: string, ...params: unknown[]): Promise<number> {
  return (await env.DB.prepare(sql)
    .bind(...params)
    .first<{ n: number }>())!.n;
}

const emailCount = (team: TestTeam) => count("SELECT COUNT(*) AS n FROM emails WHERE team_id = ?", team.teamId);
const keyRows = (team: TestTeam, key: string) => count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE team_id = ? AND key = ?", team.teamId, key);

/** An env whose MAIL_QUEUE holds each send until `open()`; `entered` settles once a send has begun. */
function gatedMailEnv() {
  let open!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const started = new Promise<void>((resolve) => (entered = resolve));
  const queue = {
    send: async () => {
      entered();
      await gate;
    },
    sendBatch: async () => {
      entered();
      await gate;
    },
  } as unknown as Queue;
  return { env: { ...(env as Env), MAIL_QUEUE: queue } as Env, open, started };
}

describe("replays", () => {
  it("POST /emails: the same key and body replays status, body and content type, and sends nothing again", async () => {
    const team = await setupTeam();
    const mail = recordingEnv();
    const key = crypto.randomUUID();
    const first = await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey(key), env: mail.env });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const firstBody = await first.text();

    const again = await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey(key), env: mail.env });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(await again.text()).toBe(firstBody);
    expect(again.headers.get("x-request-id")).toBeTruthy();

    expect(await emailCount(team)).toBe(1);
    expect(mail.sent).toHaveLength(1);
  });

  it("POST /emails/batch: a replay creates no second set of emails", async () => {
    const team = await setupTeam();
    const mail = recordingEnv();
    const body = { emails: [LIVE, { ...LIVE, to: "other@example.com" }] };
    const first = await call("POST", "emails/batch", { key: team.key, body, headers: withKey("batch-1"), env: mail.env });
    expect(first.status).toBe(201);
    const again = await call("POST", "emails/batch", { key: team.key, body, headers: withKey("batch-1"), env: mail.env });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await json(again)).toEqual(await json(first));
    expect(await emailCount(team)).toBe(2);
    expect(mail.sent).toHaveLength(2);
  });

  it("without the header nothing changes: two sends are two emails", async () => {
    const team = await setupTeam();
    const mail = recordingEnv();
    for (let i = 0; i < 2; i++) expect((await call("POST", "emails", { key: team.key, body: LIVE, env: mail.env })).status).toBe(201);
    expect(await emailCount(team)).toBe(2);
  });

  it("push notifications, log projects and survey webhooks replay without a second row", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    await subscribe(team.key, app.id, await browserSubscription());
    const pushQueue: unknown[] = [];
    const pushEnv = { ...(env as Env), PUSH_QUEUE: { send: async (body: unknown) => void pushQueue.push(body) } as unknown as Queue };
    const survey = await createSurvey(team.key);

    const cases: Array<{ path: string; body: unknown; table: string; options?: { env: Env } }> = [
      { path: `push/apps/${app.id}/notifications`, body: { title: "t", body: "b" }, table: "push_notifications", options: { env: pushEnv } },
      { path: "logs/projects", body: { name: "api" }, table: "log_projects" },
      { path: `surveys/${survey.id}/webhooks`, body: { url: "https://hooks.example.com/s" }, table: "survey_webhooks" },
    ];
    for (const { path, body, table, options } of cases) {
      const key = `k-${table}`;
      const first = await call("POST", path, { key: team.key, body, headers: withKey(key), ...options });
      expect(first.status, path).toBeLessThan(300);
      const again = await call("POST", path, { key: team.key, body, headers: withKey(key), ...options });
      expect(again.status, path).toBe(first.status);
      expect(again.headers.get("idempotent-replayed"), path).toBe("true");
      expect(await json(again), path).toEqual(await json(first));
      expect(await count(`SELECT COUNT(*) AS n FROM ${table} WHERE team_id = ?`, team.teamId), path).toBe(1);
    }
    expect(pushQueue).toHaveLength(1);
  });

  it("relay replays: the same key queues the replay's deliveries once", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    await createDestination(team.key, source.id);
    const queued: unknown[] = [];
    const queue = {
      send: async (body: unknown) => void queued.push(body),
      sendBatch: async (messages: Array<{ body: unknown }>) => void queued.push(...messages.map((m) => m.body)),
    } as unknown as Queue;
    const relayEnv = { ...(env as Env), WEBHOOK_QUEUE: queue };
    const accepted = (await json(await ingest(source.slug, JSON.stringify({ type: "a.b" }), {}, { env: relayEnv }))).data;
    // The ingest's first attempt fails (nothing listens there) and queues its retry.
    await vi.waitFor(() => expect(queued).toHaveLength(1));
    const path = `webhooks/sources/${source.id}/events/${accepted.id}/replay`;
    const first = await call("POST", path, { key: team.key, headers: withKey("replay"), env: relayEnv });
    expect(first.status).toBe(202);
    const again = await call("POST", path, { key: team.key, headers: withKey("replay"), env: relayEnv });
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await json(again)).toEqual(await json(first));
    expect(queued).toHaveLength(2);
    expect(await storeSql(source.id, "SELECT id FROM deliveries WHERE event_id = ? AND \"trigger\" = 'replay'", accepted.id)).toHaveLength(1);
  });
});

describe("the same key with another request", () => {
  const message = ["was already used with a different request (method, path or body); use a new key for a new request"];

  it("mail answers 422 in the Validation shape, for another body and for another path", async () => {
    const team = await setupTeam();
    const mail = recordingEnv();
    expect((await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("k1"), env: mail.env })).status).toBe(201);
    const other = await call("POST", "emails", { key: team.key, body: { ...LIVE, subject: "Changed" }, headers: withKey("k1"), env: mail.env });
    await expectError(other, 422, { error: "Validation failed", details: { "Idempotency-Key": message } });
    const otherPath = await call("POST", "emails/batch", { key: team.key, body: { emails: [LIVE] }, headers: withKey("k1"), env: mail.env });
    await expectError(otherPath, 422, { error: "Validation failed", details: { "Idempotency-Key": message } });
    expect(await emailCount(team)).toBe(1);
  });

  it("surveys answer 422 `{error, errors}`", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const path = `surveys/${survey.id}/webhooks`;
    expect((await call("POST", path, { key: team.key, body: { url: "https://hooks.example.com/a" }, headers: withKey("k") })).status).toBe(201);
    const res = await call("POST", path, { key: team.key, body: { url: "https://hooks.example.com/b" }, headers: withKey("k") });
    await expectError(res, 422, { error: "Validation failed", errors: { "Idempotency-Key": message } });
    expect(await count("SELECT COUNT(*) AS n FROM survey_webhooks WHERE survey_id = ?", survey.id)).toBe(1);
  });

  it("audit answers 422 `invalid_params` in its envelope", async () => {
    const team = await setupTeam();
    const base = `orgs/${team.teamId}/projects/web/audit`;
    expect((await call("POST", `${base}/reports/export`, { key: team.key, body: { format: "json" }, headers: withKey("k") })).status).toBe(202);
    const res = await call("POST", `${base}/reports/export`, {
      key: team.key,
      body: { format: "csv" },
      headers: withKey("k", { "x-request-id": "req-idem-1" }),
    });
    await expectError(res, 422, {
      data: null,
      meta: { request_id: "req-idem-1" },
      error: { code: "invalid_params", message: "Validation failed", details: { "Idempotency-Key": message } },
    });
    expect(await count("SELECT COUNT(*) AS n FROM audit_reports WHERE team_id = ?", team.teamId)).toBe(1);
  });

  it("push and logs answer 422 `{error, details}`", async () => {
    const team = await setupTeam();
    expect((await call("POST", "push/apps", { key: team.key, body: { name: "a" }, headers: withKey("k") })).status).toBe(201);
    await expectError(await call("POST", "push/apps", { key: team.key, body: { name: "b" }, headers: withKey("k") }), 422, {
      error: "Validation failed",
      details: { "Idempotency-Key": message },
    });
    // The same key string on another route of the team is the same key: refused before any work.
    await expectError(await call("POST", "logs/projects", { key: team.key, body: { name: "a" }, headers: withKey("k") }), 422, {
      error: "Validation failed",
      details: { "Idempotency-Key": message },
    });
    expect(await count("SELECT COUNT(*) AS n FROM log_projects WHERE team_id = ?", team.teamId)).toBe(0);
    expect((await call("POST", "logs/projects", { key: team.key, body: { name: "a" }, headers: withKey("k2") })).status).toBe(201);
    await expectError(await call("POST", "logs/projects", { key: team.key, body: { name: "b" }, headers: withKey("k2") }), 422, {
      error: "Validation failed",
      details: { "Idempotency-Key": message },
    });
    expect(await count("SELECT COUNT(*) AS n FROM log_projects WHERE team_id = ?", team.teamId)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM push_apps WHERE team_id = ?", team.teamId)).toBe(1);
  });
});

describe("concurrent duplicates", () => {
  it("10 parallel identical sends create one email; the others are replays or 409 in progress", async () => {
    const team = await setupTeam();
    const mail = recordingEnv();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("parallel"), env: mail.env })),
    );
    const statuses = responses.map((r) => r.status);
    expect(
      statuses.every((s) => s === 201 || s === 409),
      String(statuses),
    ).toBe(true);
    const executed = responses.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null);
    expect(executed).toHaveLength(1);
    expect(await emailCount(team)).toBe(1);
    expect(mail.sent).toHaveLength(1);
  });

  it("10 parallel identical log project creations make one project", async () => {
    const team = await setupTeam();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => call("POST", "logs/projects", { key: team.key, body: { name: "once" }, headers: withKey("p") })),
    );
    expect(responses.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    expect(await count("SELECT COUNT(*) AS n FROM log_projects WHERE team_id = ?", team.teamId)).toBe(1);
  });

  it("a duplicate while the first still runs answers 409 in the product's shape; once it finishes, the replay", async () => {
    const team = await setupTeam();
    const gated = gatedMailEnv();
    const firstPromise = call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("slow"), env: gated.env });
    await gated.started;

    const duplicate = await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("slow"), env: gated.env });
    expect(duplicate.headers.get("retry-after")).toBe("1");
    await expectError(duplicate, 409, { error: "A request with this Idempotency-Key is in progress; retry after it has finished" });
    // Another request under the running key is still a mismatch, not a wait.
    expect((await call("POST", "emails", { key: team.key, body: { ...LIVE, subject: "x" }, headers: withKey("slow"), env: gated.env })).status).toBe(422);

    gated.open();
    const first = await firstPromise;
    expect(first.status).toBe(201);
    const replay = await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("slow"), env: gated.env });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await json(replay)).toEqual(await json(first));
    expect(await emailCount(team)).toBe(1);
  });

  it("a claim whose request never finished is taken over by the same request after the lease", async () => {
    setClock(T0);
    const team = await setupTeam();
    const gated = gatedMailEnv();
    const stuck = call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("abandoned"), env: gated.env });
    await gated.started;
    expect((await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("abandoned") })).status).toBe(409);
    // A different request never takes an abandoned claim over.
    setClock(T0 + IDEMPOTENCY_LEASE_MS + 1000);
    expect((await call("POST", "emails", { key: team.key, body: { ...LIVE, subject: "x" }, headers: withKey("abandoned") })).status).toBe(422);
    const retry = await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("abandoned"), env: recordingEnv().env });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    const retryBody = await json(retry);
    gated.open();
    await stuck;
    // The late first request no longer holds the claim: the stored answer stays the retry's.
    const replay = await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("abandoned") });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await json(replay)).toEqual(retryBody);
  });
});

describe("scope and syntax of keys", () => {
  it("two teams using the same key string get two independent keys", async () => {
    const [a, b] = [await setupTeam(), await setupTeam()];
    const mail = recordingEnv();
    const resA = await call("POST", "emails", { key: a.key, body: LIVE, headers: withKey("shared"), env: mail.env });
    const resB = await call("POST", "emails", { key: b.key, body: { ...LIVE, subject: "B" }, headers: withKey("shared"), env: mail.env });
    expect([resA.status, resB.status]).toEqual([201, 201]);
    expect(resB.headers.get("idempotent-replayed")).toBeNull();
    const [dataA, dataB] = [(await json(resA)).data, (await json(resB)).data];
    expect(dataA.id).not.toBe(dataB.id);
    expect([await emailCount(a), await emailCount(b)]).toEqual([1, 1]);
    // Each team replays its own answer.
    const againB = await call("POST", "emails", { key: b.key, body: { ...LIVE, subject: "B" }, headers: withKey("shared"), env: mail.env });
    expect((await json(againB)).data.id).toBe(dataB.id);
  });

  it("two keys of one team share their idempotency keys", async () => {
    const team = await setupTeam();
    const { addKey, ALL_SCOPES } = await import("../helpers/api");
    const second = await addKey(team.teamId, ALL_SCOPES);
    const mail = recordingEnv();
    const first = await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("team-wide"), env: mail.env });
    const again = await call("POST", "emails", { key: second.key, body: LIVE, headers: withKey("team-wide"), env: mail.env });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await json(again)).toEqual(await json(first));
  });

  it("a key that is empty, too long or not printable ASCII answers 400 in the product's shape, before any work", async () => {
    const team = await setupTeam();
    const mail = recordingEnv();
    const expected = "Idempotency-Key must be 1 to 255 printable ASCII characters";
    for (const bad of ["", "x".repeat(256), "tab\there", "del\u007f"]) {
      await expectError(await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey(bad), env: mail.env }), 400, { error: expected });
    }
    await expectError(
      await call("POST", `orgs/${team.teamId}/projects/p/audit/reports/export`, {
        key: team.key,
        body: {},
        headers: withKey("x".repeat(256), { "x-request-id": "req-idem-2" }),
      }),
      400,
      { data: null, meta: { request_id: "req-idem-2" }, error: { code: "invalid_params", message: expected } },
    );
    expect(await emailCount(team)).toBe(0);
    // 255 printable characters, spaces and symbols included, are a key.
    const longest = ("a ~!" as string).repeat(64).slice(0, 255);
    expect((await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey(longest), env: mail.env })).status).toBe(201);
  });

  it("a missing or invalid API key is 401 whatever the header says, and claims nothing", async () => {
    await expectError(await call("POST", "emails", { key: "edp_nope", body: LIVE, headers: withKey("k") }), 401, { error: "Invalid or missing API key" });
    await expectError(await call("POST", "emails", { body: LIVE, headers: withKey("x".repeat(300)) }), 401, { error: "Invalid or missing API key" });
  });
});

describe("replays never outrank authority (issue 23, finding 2)", () => {
  it("a key without the route's scope retrying another key's request gets 403, never the stored answer and its secret", async () => {
    const team = await setupTeam();
    const { addKey } = await import("../helpers/api");
    const reader = await addKey(team.teamId, ["surveys:read"]);
    const webhooksReader = await addKey(team.teamId, ["webhooks:read"]);

    // A log project's plaintext ingest token.
    const body = { name: "payments" };
    const first = await call("POST", "logs/projects", { key: team.key, body, headers: withKey("create-project") });
    expect(first.status).toBe(201);
    const token = (await json(first)).data.ingest_token as string;
    expect(token).toMatch(/^lgt_/);
    const stolen = await call("POST", "logs/projects", { key: reader.key, body, headers: withKey("create-project") });
    expect(stolen.headers.get("idempotent-replayed")).toBeNull();
    const stolenText = await stolen.text();
    expect({ status: stolen.status, body: JSON.parse(stolenText) }).toEqual({ status: 403, body: { error: "Insufficient scope" } });
    expect(stolenText).not.toContain(token);

    // A destination's whsec_ secret, to a key that may only read the relay.
    const source = await createSource(team.key);
    const destinationBody = { url: "https://hooks.example.com/d" };
    const path = `webhooks/sources/${source.id}/destinations`;
    const created = await call("POST", path, { key: team.key, body: destinationBody, headers: withKey("create-destination") });
    expect(created.status).toBe(201);
    const secret = (await json(created)).data.secret as string;
    const retried = await call("POST", path, { key: webhooksReader.key, body: destinationBody, headers: withKey("create-destination") });
    const retriedText = await retried.text();
    expect(retried.status).toBe(403);
    expect(retriedText).not.toContain(secret);

    // Another body under a used key: 403 too, not the 422 that would say the key is in use.
    await expectError(await call("POST", "logs/projects", { key: reader.key, body: { name: "other" }, headers: withKey("create-project") }), 403, {
      error: "Insufficient scope",
    });
    // The owner of the scope still gets the replay.
    const again = await call("POST", "logs/projects", { key: team.key, body, headers: withKey("create-project") });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await json(again)).data.ingest_token).toBe(token);
  });

  it("the stored answer, which carries a secret shown once, is encrypted at rest (ENCRYPTION_KEY)", async () => {
    const team = await setupTeam();
    const first = await call("POST", "logs/projects", { key: team.key, body: { name: "sealed" }, headers: withKey("sealed") });
    const token = (await json(first)).data.ingest_token as string;
    const row = await env.DB.prepare("SELECT response_body FROM idempotency_keys WHERE team_id = ? AND key = 'sealed'")
      .bind(team.teamId)
      .first<{ response_body: ArrayBuffer }>();
    const stored = new Uint8Array(row!.response_body);
    const gunzipText = async (bytes: Uint8Array) => new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
    // Not a readable gzip stream: only the key opens it.
    expect([stored[0], stored[1]]).not.toEqual([0x1f, 0x8b]);
    await expect(gunzipText(stored)).rejects.toThrow();
    expect(await gunzipText(await decryptBytes((env as Env).ENCRYPTION_KEY, stored))).toContain(token);
    const again = await call("POST", "logs/projects", { key: team.key, body: { name: "sealed" }, headers: withKey("sealed") });
    expect((await json(again)).data.ingest_token).toBe(token);
  });

  it("on every idempotent route a key without its scope is refused by the route before any key is claimed", async () => {
    const team = await setupTeam({ scopes: ["billing:read"] });
    for (const route of IDEMPOTENT_ROUTES) {
      const path = route.slice(1).replace(":org_id", team.teamId).replace(/:\w+/g, crypto.randomUUID());
      const res = await call("POST", path, { key: team.key, body: {}, headers: withKey(`k${route}`) });
      expect(res.status, route).toBe(403);
      expect(res.headers.get("idempotent-replayed"), route).toBeNull();
    }
    expect(await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE team_id = ?", team.teamId)).toBe(0);
  });
});

describe("which answers are kept", () => {
  it("a 422 answer of the request itself is kept and replayed", async () => {
    const team = await setupTeam();
    const body = { ...LIVE, to: "not an address" };
    const first = await call("POST", "emails", { key: team.key, body, headers: withKey("bad-to") });
    expect(first.status).toBe(422);
    const again = await call("POST", "emails", { key: team.key, body, headers: withKey("bad-to") });
    expect(again.status).toBe(422);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await json(again)).toEqual(await json(first));
  });

  it("403 (scope) and 429 (sandbox cap) are not kept: the retry runs again", async () => {
    const readOnly = await setupTeam({ scopes: ["mail:read"] });
    expect((await call("POST", "emails", { key: readOnly.key, body: LIVE, headers: withKey("scope") })).status).toBe(403);
    expect(await keyRows(readOnly, "scope")).toBe(0);

    const sandbox = await sandboxTeam({ hourly_cap: 1 });
    const mail = recordingEnv();
    expect((await call("POST", "emails", { key: sandbox.key, body: SANDBOX_MAIL, headers: withKey("one"), env: mail.env })).status).toBe(201);
    const capped = await call("POST", "emails", { key: sandbox.key, body: SANDBOX_MAIL, headers: withKey("two"), env: mail.env });
    expect(capped.status).toBe(429);
    expect(await keyRows(sandbox, "two")).toBe(0);
    const retried = await call("POST", "emails", { key: sandbox.key, body: SANDBOX_MAIL, headers: withKey("two"), env: mail.env });
    expect(retried.status).toBe(429);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
  });

  it("an answer over the stored-body cap keeps the work done once and says the answer is gone", async () => {
    const team = await setupTeam();
    const mail = recordingEnv();
    // Random text hardly compresses: text and html (each at mail's 256 KiB limit) are echoed in the
    // answer, which stays over the cap once gzipped.
    const noise = () => {
      const random = new Uint8Array(LIMITS.body);
      for (let i = 0; i < random.length; i += 65_536) crypto.getRandomValues(random.subarray(i, i + 65_536));
      return Array.from(random, (b) => (b % 36).toString(36)).join("");
    };
    const body = { ...LIVE, text: noise(), html: `<p>${noise().slice(7)}</p>` };
    expect((2 * LIMITS.body * Math.log2(36)) / 8).toBeGreaterThan(STORED_BODY_CAP);
    const first = await call("POST", "emails", { key: team.key, body, headers: withKey("big"), env: mail.env });
    expect(first.status).toBe(201);
    const again = await call("POST", "emails", { key: team.key, body, headers: withKey("big"), env: mail.env });
    expect(again.status).toBe(409);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await json(again)).error).toMatch(/already completed with status 201; its response \(\d+ bytes\) was too large to keep/);
    expect(await emailCount(team)).toBe(1);
    const stored = await env.DB.prepare("SELECT response_status AS s, response_body IS NULL AS gone FROM idempotency_keys WHERE team_id = ?")
      .bind(team.teamId)
      .first<{ s: number; gone: number }>();
    expect(stored).toEqual({ s: 201, gone: 1 });
  });
});

/** Runs `work` while D1 refuses every insert of `table` for the team (a real constraint failure, by trigger). */
async function withFailingInsert<T>(table: string, teamId: string, work: () => Promise<T>): Promise<T> {
  const trigger = `fail_${table}_${teamId.replace(/-/g, "")}`;
  await env.DB.exec(`CREATE TRIGGER ${trigger} BEFORE INSERT ON ${table} WHEN NEW.team_id = '${teamId}' BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`);
  try {
    return await work();
  } finally {
    await env.DB.exec(`DROP TRIGGER ${trigger}`);
  }
}

describe("failures give the key back", () => {
  it("a 5xx answer (audit export whose record cannot be stored, 503) releases the key; the retry does the work once", async () => {
    const team = await setupTeam();
    const base = `orgs/${team.teamId}/projects/web/audit`;
    vi.spyOn(console, "error").mockImplementation(() => {});
    const failed = await withFailingInsert("audit_reports", team.teamId, () =>
      call("POST", `${base}/reports/export`, { key: team.key, body: { format: "json" }, headers: withKey("exp") }),
    );
    expect(failed.status).toBe(503);
    expect(await keyRows(team, "exp")).toBe(0);

    const retry = await call("POST", `${base}/reports/export`, { key: team.key, body: { format: "json" }, headers: withKey("exp") });
    expect(retry.status).toBe(202);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    const replay = await call("POST", `${base}/reports/export`, { key: team.key, body: { format: "json" }, headers: withKey("exp") });
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect((await json(replay)).data.id).toBe((await json(retry)).data.id);
    expect(await count("SELECT COUNT(*) AS n FROM audit_reports WHERE team_id = ? AND status <> 'failed'", team.teamId)).toBe(1);
  });

  it("a thrown error (push notification that cannot be stored, 500) releases the key; the retry sends the notification", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    await subscribe(team.key, app.id, await browserSubscription());
    vi.spyOn(console, "error").mockImplementation(() => {});
    const path = `push/apps/${app.id}/notifications`;
    const failed = await withFailingInsert("push_notifications", team.teamId, () =>
      call("POST", path, { key: team.key, body: { title: "t", body: "b" }, headers: withKey("n") }),
    );
    expect(failed.status).toBe(500);
    expect(await keyRows(team, "n")).toBe(0);
    const sent: unknown[] = [];
    const working = { ...(env as Env), PUSH_QUEUE: { send: async (m: unknown) => void sent.push(m) } as unknown as Queue };
    expect((await call("POST", path, { key: team.key, body: { title: "t", body: "b" }, headers: withKey("n"), env: working })).status).toBe(202);
    expect(
      (await call("POST", path, { key: team.key, body: { title: "t", body: "b" }, headers: withKey("n"), env: working })).headers.get("idempotent-replayed"),
    ).toBe("true");
    expect(sent).toHaveLength(1);
    expect(await count("SELECT COUNT(*) AS n FROM push_notifications WHERE app_id = ?", app.id)).toBe(1);
  });
});

describe("retention", () => {
  it("keys expire after 24 hours: the same request then runs again, and the hourly job deletes old rows in bounded steps", async () => {
    setClock(T0);
    const team = await setupTeam();
    const mail = recordingEnv();
    expect((await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("day"), env: mail.env })).status).toBe(201);
    // More old rows than one delete statement takes.
    const stale = new Date(T0 - 2 * HOUR).toISOString();
    const inserts = Array.from({ length: RETENTION_CHUNK + 20 }, (_, i) =>
      env.DB.prepare("INSERT INTO idempotency_keys (team_id, key, request_hash, response_status, created_at) VALUES (?, ?, 'h', 201, ?)").bind(
        team.teamId,
        `old-${i}`,
        stale,
      ),
    );
    await env.DB.batch(inserts);

    setClock(T0 + 23 * HOUR);
    const within = await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("day"), env: mail.env });
    expect(within.headers.get("idempotent-replayed")).toBe("true");
    const keep = await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("fresh"), env: mail.env });
    expect(keep.status).toBe(201);

    setClock(T0 + 25 * HOUR);
    // Not yet deleted by the job, but expired: the request runs again.
    const after = await call("POST", "emails", { key: team.key, body: LIVE, headers: withKey("day"), env: mail.env });
    expect(after.status).toBe(201);
    expect(after.headers.get("idempotent-replayed")).toBeNull();
    expect(await emailCount(team)).toBe(3);

    const deleted = await idempotencyRetention(env);
    expect(deleted).toBeGreaterThanOrEqual(RETENTION_CHUNK + 20);
    expect(await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE team_id = ? AND key LIKE 'old-%'", team.teamId)).toBe(0);
    // Rows younger than 24 hours stay: the one made at T0+23h and the one renewed at T0+25h.
    expect(await keyRows(team, "fresh")).toBe(1);
    expect(await keyRows(team, "day")).toBe(1);
  });

  it("the hourly cron runs the retention", async () => {
    const team = await setupTeam();
    const at = Date.parse("2026-06-01T12:00:00.000Z");
    await env.DB.prepare(
      "INSERT INTO idempotency_keys (team_id, key, request_hash, response_status, created_at) VALUES (?, 'old', 'h', 201, ?), (?, 'young', 'h', 201, ?)",
    )
      .bind(team.teamId, new Date(at - 25 * HOUR).toISOString(), team.teamId, new Date(at - 23 * HOUR).toISOString())
      .run();
    setClock(at);
    vi.spyOn(console, "error").mockImplementation(() => {});
    await worker.scheduled(createScheduledController({ cron: "0 * * * *", scheduledTime: at }), env);
    expect([await keyRows(team, "old"), await keyRows(team, "young")]).toEqual([0, 1]);
  });
});

describe("OpenAPI document", () => {
  it("names the shared Idempotency-Key header on every idempotent operation, and each one honours it", async () => {
    const team = await setupTeam();
    const doc = await json(await call("GET", "openapi.json"));
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: "Idempotency-Key", in: "header", required: false });
    for (const route of IDEMPOTENT_ROUTES) {
      const path = `/api/v1${route.replace(/:(\w+)/g, "{$1}")}`;
      const operation = doc.paths[path]?.post;
      expect(operation, path).toBeTruthy();
      expect(operation.parameters, path).toContainEqual({ $ref: "#/components/parameters/IdempotencyKey" });
      expect(operation.responses["409"], path).toBeTruthy();
      // Mounted, not only documented: a malformed key is refused on that very route.
      const concrete = route
        .replace(":org_id", team.teamId)
        .replace(/:(\w+)/g, () => crypto.randomUUID())
        .slice(1);
      const res = await call("POST", concrete, { key: team.key, body: {}, headers: withKey("") });
      expect(res.status, route).toBe(400);
    }
    // No other operation names it.
    const named: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { parameters?: unknown[] }>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const refs = (operation.parameters ?? []).map((p) => (p as { $ref?: string }).$ref);
        if (refs.includes("#/components/parameters/IdempotencyKey")) named.push(`${method} ${path}`);
      }
    }
    expect(named.sort()).toEqual(IDEMPOTENT_ROUTES.map((route) => `post /api/v1${route.replace(/:(\w+)/g, "{$1}")}`).sort());
    // Operations without the header do not name it.
    expect(doc.paths["/api/v1/emails"].get.parameters ?? []).not.toContainEqual({ $ref: "#/components/parameters/IdempotencyKey" });
    expect(doc.paths["/api/v1/logs/projects/{id}/rotate-token"].post.parameters ?? []).not.toContainEqual({ $ref: "#/components/parameters/IdempotencyKey" });
    const batch = doc.paths["/api/v1/emails/batch"].post;
    expect(batch.responses["201"].headers["Idempotent-Replayed"]).toEqual({ $ref: "#/components/headers/IdempotentReplayed" });
  });
});
