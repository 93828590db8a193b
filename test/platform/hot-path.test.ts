// The authenticated hot path (issue 15): the per-isolate key cache (its bounds, revocation and plan
// changes on this isolate at once and elsewhere within KEY_CACHE_TTL_MS, the negative cache) and
// one Durable Object call per request when the default and a strict bucket apply. I/O is counted
// through wrapped bindings, never timed.
import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { auth, isWellFormedKey, KEY_CACHE_TTL_MS, keyCacheSizes, requireScope, resolveKey, UNKNOWN_KEY_MAX, UNKNOWN_KEY_TTL_MS } from "../../src/platform/auth";
import { setClock } from "../../src/platform/clock";
import { sha256Hex } from "../../src/platform/crypto";
import { handleError } from "../../src/platform/handle-error";
import { RateLimiter } from "../../src/platform/rate-limit/durable-object";
import { strictCounter, teamObject } from "../../src/platform/rate-limit/middleware";
import { requestContext } from "../../src/platform/request-context";
import { createRouter } from "../../src/platform/router";
import { routeMiddleware, unmatchedMiddleware, type RouteNeeds } from "../../src/platform/route-access";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../../src/env";
import { addKey, admin, call, setupTeam } from "../helpers/api";
import { countingDb } from "../helpers/counting";

/** 2031-06-01T12:00:00Z: the start of a rate-limit window. */
const T0 = Date.UTC(2031, 5, 1, 12, 0, 0);
const T0_S = T0 / 1000;

afterEach(() => setClock(null));

/** The pool's rate-limit namespace behind a wrapper that counts object calls (one stub per call). */
function countingLimiter(): { namespace: Env["RATE_LIMITER"]; calls: () => number } {
  let calls = 0;
  const real = env.RATE_LIMITER;
  const namespace = {
    idFromName: (name: string) => real.idFromName(name),
    get: (id: DurableObjectId) => {
      calls++;
      return real.get(id);
    },
  } as unknown as Env["RATE_LIMITER"];
  return { namespace, calls: () => calls };
}

/** A well-formed key that was never issued. */
function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return (
    "edp_" +
    btoa(String.fromCharCode(...bytes))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "")
  );
}

const teamStub = (teamId: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(teamObject(teamId)));

describe("key format", () => {
  it("every issued key is well formed; malformed tokens are refused without a D1 read", async () => {
    const team = await setupTeam();
    expect(isWellFormedKey(team.key)).toBe(true);
    const { db, statements } = countingDb();
    for (const token of ["abc", "edp_short", `${team.key}x`, team.key.slice(0, 12), `xdp_${team.key.slice(4)}`]) {
      expect(await resolveKey(db, token)).toBeNull();
    }
    expect(statements()).toBe(0);
    const res = await call("GET", "usage", { key: "edp_unknown", env: { ...env, DB: db } as Env });
    expect(res.status).toBe(401);
    expect(statements()).toBe(0);
  });
});

describe("key cache", () => {
  it("a warm authenticated GET /usage reads D1 once (the key) and calls one Durable Object (count and usage in one call)", async () => {
    setClock(T0 + 1_000);
    const team = await setupTeam({ scopes: ["billing:read"] });
    const { db, statements } = countingDb();
    const { namespace, calls } = countingLimiter();
    const bindings = { ...env, DB: db, RATE_LIMITER: namespace } as Env;
    expect((await call("GET", "usage", { key: team.key, env: bindings })).status).toBe(200);
    // The key look-up and (after the answer) the key's "last used"; the meter answers the usage.
    expect({ statements: statements(), calls: calls() }).toEqual({ statements: 2, calls: 1 });
    for (let i = 0; i < 5; i++) expect((await call("GET", "usage", { key: team.key, env: bindings })).status).toBe(200);
    // Five more requests: no key look-up, no D1 usage read, no "last used" within the minute; five meter calls.
    expect({ statements: statements(), calls: calls() }).toEqual({ statements: 2, calls: 6 });
    expect(await teamStub(team.teamId).peek(T0_S)).toBe(6);
  });

  it("a key revoked on this isolate answers 401 at once, even while cached", async () => {
    const team = await setupTeam();
    expect((await call("GET", "usage", { key: team.key })).status).toBe(200);
    expect((await admin("DELETE", `keys/${team.keyId}`)).status).toBe(204);
    expect((await call("GET", "usage", { key: team.key })).status).toBe(401);
  });

  it("a plan changed on this isolate applies to the next request", async () => {
    setClock(T0 + 2_000);
    const team = await setupTeam({ plan: "free" });
    expect((await call("GET", "usage", { key: team.key })).headers.get("x-ratelimit-limit")).toBe("600");
    expect((await admin("PATCH", `teams/${team.teamId}`, { plan: "scale" })).status).toBe(200);
    const res = await call("GET", "usage", { key: team.key });
    expect(res.headers.get("x-ratelimit-limit")).toBe("30000");
    expect((await res.json<{ data: { plan: string } }>()).data.plan).toBe("scale");
  });

  it("a mail policy edited on this isolate applies to the next request", async () => {
    const team = await setupTeam();
    expect((await resolveKey(env.DB, team.key))?.mail.suspended).toBe(false);
    expect((await admin("PATCH", `keys/${team.keyId}`, { mail: { suspended: true } })).status).toBe(200);
    expect((await resolveKey(env.DB, team.key))?.mail.suspended).toBe(true);
  });

  it("a key revoked by another isolate (straight in D1) answers 401 once KEY_CACHE_TTL_MS has passed, not later", async () => {
    setClock(T0);
    const team = await setupTeam();
    expect((await call("GET", "usage", { key: team.key })).status).toBe(200);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").bind(new Date(T0).toISOString(), team.keyId).run();
    setClock(T0 + KEY_CACHE_TTL_MS - 1);
    // Within the bound this isolate may still answer from what it resolved...
    expect((await call("GET", "usage", { key: team.key })).status).toBe(200);
    // ...and at the bound it must not.
    setClock(T0 + KEY_CACHE_TTL_MS);
    expect((await call("GET", "usage", { key: team.key })).status).toBe(401);
  });

  it("a plan changed by another isolate applies within KEY_CACHE_TTL_MS", async () => {
    setClock(T0 + 3_000);
    const team = await setupTeam({ plan: "free" });
    expect((await call("GET", "usage", { key: team.key })).headers.get("x-ratelimit-limit")).toBe("600");
    await env.DB.prepare("UPDATE teams SET plan = 'pro' WHERE id = ?").bind(team.teamId).run();
    setClock(T0 + 3_000 + KEY_CACHE_TTL_MS);
    expect((await call("GET", "usage", { key: team.key })).headers.get("x-ratelimit-limit")).toBe("6000");
  });

  it("a clock moved backwards does not keep an entry alive", async () => {
    setClock(T0 + 50_000);
    const team = await setupTeam();
    const { db, statements } = countingDb();
    expect(await resolveKey(db, team.key)).not.toBeNull();
    expect(await resolveKey(db, team.key)).not.toBeNull();
    expect(statements()).toBe(1);
    setClock(T0);
    expect(await resolveKey(db, team.key)).not.toBeNull();
    expect(statements()).toBe(2);
  });
});

describe("negative cache", () => {
  it("an unknown key is looked up once per UNKNOWN_KEY_TTL_MS; a key created on this isolate clears it", async () => {
    setClock(T0);
    const { db, statements } = countingDb();
    const unknown = randomKey();
    for (let i = 0; i < 5; i++) expect(await resolveKey(db, unknown)).toBeNull();
    expect(statements()).toBe(1);
    setClock(T0 + UNKNOWN_KEY_TTL_MS);
    expect(await resolveKey(db, unknown)).toBeNull();
    expect(statements()).toBe(2);
    // Any key created here (through the operator API) forgets every unknown key, so no new key can
    // ever be refused by it.
    await addKey((await setupTeam()).teamId, ["mail:read"]);
    expect(await resolveKey(db, unknown)).toBeNull();
    expect(statements()).toBe(3);
  });

  it("a key that appears in D1 after it was refused is accepted once UNKNOWN_KEY_TTL_MS has passed", async () => {
    setClock(T0);
    const team = await setupTeam();
    const { db } = countingDb();
    const later = randomKey();
    expect(await resolveKey(db, later)).toBeNull();
    // Another isolate issues exactly this key (a stand-in: keys are random, so only a guess could
    // have been refused before it existed).
    await env.DB.prepare(
      "INSERT INTO api_keys (id, team_id, name, prefix, key_hash, scopes, mail, created_at) VALUES (?, ?, 'late', ?, ?, '[\"billing:read\"]', ?, ?)",
    )
      .bind(
        crypto.randomUUID(),
        team.teamId,
        later.slice(0, 12),
        await sha256Hex(later),
        JSON.stringify({ sandbox: false, allowed_streams: [], allowed_recipients: [], hourly_cap: null, daily_cap: null, suspended: false }),
        new Date(T0).toISOString(),
      )
      .run();
    setClock(T0 + UNKNOWN_KEY_TTL_MS - 1);
    expect(await resolveKey(db, later)).toBeNull();
    setClock(T0 + UNKNOWN_KEY_TTL_MS);
    expect((await resolveKey(db, later))?.teamId).toBe(team.teamId);
  });

  it("random keys stay within UNKNOWN_KEY_MAX entries and never evict a valid key", async () => {
    setClock(T0);
    const team = await setupTeam();
    const { db, statements } = countingDb();
    expect(await resolveKey(db, team.key)).not.toBeNull();
    for (let i = 0; i < UNKNOWN_KEY_MAX + 20; i++) expect(await resolveKey(db, randomKey())).toBeNull();
    expect(keyCacheSizes(db)).toEqual({ known: 1, unknown: UNKNOWN_KEY_MAX });
    const before = statements();
    expect((await resolveKey(db, team.key))?.keyId).toBe(team.keyId);
    expect(statements()).toBe(before);
  });
});

/**
 * A route declared like the push subscriber registration (scope `push:write`, strict family
 * `push_subscribers`): auth, scope, strict, handler, from platform/route-access.ts. `between`: the
 * product's guards, run after authentication (a middleware that may answer on its own).
 */
const REGISTER: RouteNeeds = { scope: "push:write", strict: "push_subscribers" };
function strictApp(between: MiddlewareHandler<AppEnv>[] = []) {
  const app = createRouter();
  app.use("*", requestContext());
  app.use("/register", ...routeMiddleware({ kind: "bearer", guards: between }, REGISTER));
  app.post("/register", (c) => c.json({ ok: true }, 201));
  app.onError(handleError);
  return app;
}

function post(app: ReturnType<typeof strictApp>, key: string, bindings: Env): Promise<Response> {
  const request = new Request("http://app.test/register", { method: "POST", headers: { authorization: `Bearer ${key}`, "cf-connecting-ip": "203.0.113.200" } });
  return Promise.resolve(app.fetch(request, bindings, createExecutionContext()));
}

describe("one Durable Object call per request", () => {
  it("default and strict are counted with one call; both counters move", async () => {
    setClock(T0 + 4_000);
    const team = await setupTeam({ plan: "pro", scopes: ["push:write"] });
    const { namespace, calls } = countingLimiter();
    const bindings = { ...env, RATE_LIMITER: namespace } as Env;
    const app = strictApp();
    for (let i = 1; i <= 3; i++) {
      const res = await post(app, team.key, bindings);
      expect(res.status).toBe(201);
      expect(res.headers.get("x-ratelimit-limit")).toBe("30");
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(30 - i));
    }
    expect(calls()).toBe(3);
    const stub = teamStub(team.teamId);
    expect(await stub.peek(T0_S)).toBe(3);
    expect(await stub.peek(T0_S, strictCounter("push_subscribers"))).toBe(3);
  });

  it("a key without the scope answers 403 and is counted in default only, as before", async () => {
    setClock(T0 + 4_000);
    const team = await setupTeam({ plan: "pro", scopes: ["push:read"] });
    const { namespace, calls } = countingLimiter();
    const res = await post(strictApp(), team.key, { ...env, RATE_LIMITER: namespace } as Env);
    expect(res.status).toBe(403);
    expect(res.headers.get("x-ratelimit-limit")).toBe("6000");
    expect(calls()).toBe(1);
    expect(await teamStub(team.teamId).peek(T0_S)).toBe(1);
    expect(await teamStub(team.teamId).peek(T0_S, strictCounter("push_subscribers"))).toBe(0);
  });

  it("a full default bucket refuses and leaves the strict counter alone", async () => {
    setClock(T0 + 4_000);
    const team = await setupTeam({ plan: "free", scopes: ["push:write"] });
    await teamStub(team.teamId).hit(T0_S, 600);
    const res = await post(strictApp(), team.key, env as Env);
    expect(res.status).toBe(429);
    expect(res.headers.get("x-ratelimit-limit")).toBe("600");
    expect(await teamStub(team.teamId).peek(T0_S, strictCounter("push_subscribers"))).toBe(0);
  });

  it("enterprise: only the strict family is counted, with one call", async () => {
    setClock(T0 + 4_000);
    const team = await setupTeam({ plan: "enterprise", scopes: ["push:write"] });
    const { namespace, calls } = countingLimiter();
    const res = await post(strictApp(), team.key, { ...env, RATE_LIMITER: namespace } as Env);
    expect(res.status).toBe(201);
    expect(res.headers.get("x-ratelimit-limit")).toBe("30");
    expect(calls()).toBe(1);
    expect(await teamStub(team.teamId).peek(T0_S)).toBe(0);
  });

  it("a guard that may answer on its own makes strict count later, still exactly once", async () => {
    setClock(T0 + 4_000);
    const team = await setupTeam({ plan: "pro", scopes: ["push:write"] });
    const { namespace, calls } = countingLimiter();
    const bindings = { ...env, RATE_LIMITER: namespace } as Env;
    let refuse = true;
    const maybe: MiddlewareHandler<AppEnv> = async (c, next) => (refuse ? c.json({ refused: true }, 409) : next());
    const app = strictApp([maybe]);
    expect((await post(app, team.key, bindings)).status).toBe(409);
    expect(await teamStub(team.teamId).peek(T0_S, strictCounter("push_subscribers"))).toBe(0);
    refuse = false;
    expect((await post(app, team.key, bindings)).status).toBe(201);
    expect(calls()).toBe(3);
    expect(await teamStub(team.teamId).peek(T0_S)).toBe(2);
    expect(await teamStub(team.teamId).peek(T0_S, strictCounter("push_subscribers"))).toBe(1);
  });

  it("the product's check of unmatched paths never runs for a served path: the route counts once, in one call", async () => {
    setClock(T0 + 4_000);
    const team = await setupTeam({ plan: "pro", scopes: ["push:write"] });
    const { namespace, calls } = countingLimiter();
    const app = createRouter();
    app.use("*", requestContext());
    app.use("/register", ...routeMiddleware({ kind: "bearer" }, REGISTER));
    app.post("/register", (c) => c.json({ ok: true }, 201));
    app.use("*", ...unmatchedMiddleware({ kind: "bearer" }, []));
    app.onError(handleError);
    const res = await post(app, team.key, { ...env, RATE_LIMITER: namespace } as Env);
    expect(res.status).toBe(201);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("29");
    expect(calls()).toBe(1);
    expect(await teamStub(team.teamId).peek(T0_S)).toBe(1);
  });

  it("RATE_LIMITS=off: no call at all", async () => {
    const team = await setupTeam({ plan: "free", scopes: ["push:write"] });
    const { namespace, calls } = countingLimiter();
    expect((await post(strictApp(), team.key, { ...env, RATE_LIMITS: "off", RATE_LIMITER: namespace } as Env)).status).toBe(201);
    expect(calls()).toBe(0);
  });
});

describe("counter storage", () => {
  it("an object written before named counters keeps its current count", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`default:team:${crypto.randomUUID()}`));
    await runInDurableObject(stub, async (_instance, state) => {
      state.storage.sql.exec("CREATE TABLE windows (start INTEGER PRIMARY KEY, count INTEGER NOT NULL)");
      state.storage.sql.exec("INSERT INTO windows (start, count) VALUES (?, 41)", T0_S);
      // The next instance over this storage (after a deploy) carries the count over.
      const upgraded = new RateLimiter(state, env as Env);
      expect(upgraded.peek(T0_S)).toBe(41);
      expect(upgraded.hitAll(T0_S, [{ name: "", limit: 600 }])).toEqual([42]);
      expect(state.storage.sql.exec("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'windows'").one().n).toBe(0);
    });
  });

  it("hitAll stops at the first counter that refuses", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`default:team:${crypto.randomUUID()}`));
    expect(
      await stub.hitAll(T0_S, [
        { name: "", limit: 1 },
        { name: "strict:x", limit: 5 },
      ]),
    ).toEqual([1, 1]);
    expect(
      await stub.hitAll(T0_S, [
        { name: "", limit: 1 },
        { name: "strict:x", limit: 5 },
      ]),
    ).toEqual([2]);
    expect(await stub.peek(T0_S, "strict:x")).toBe(1);
    expect(
      await stub.hitAll(T0_S, [
        { name: "strict:x", limit: 1 },
        { name: "", limit: 100 },
      ]),
    ).toEqual([2]);
  });
});

/** A team of `plan` whose default bucket (`fill` requests) or strict family is already full at T0, seen through a counting limiter. */
async function filledTeam(plan: string, scopes: string[], fill: { counter?: string; count: number }) {
  setClock(T0 + 4_000);
  const team = await setupTeam({ plan, scopes });
  await teamStub(team.teamId).hit(T0_S, fill.count, fill.counter);
  const { namespace, calls } = countingLimiter();
  return { team, calls, bindings: { ...env, RATE_LIMITER: namespace } as Env };
}

describe("refusals remembered until their window ends", () => {
  it("a full bucket refuses the rest of its window without a call, with the object's answer", async () => {
    const { team, calls, bindings } = await filledTeam("free", ["push:write"], { count: 600 });
    const app = strictApp();
    const first = await post(app, team.key, bindings);
    expect(first.status).toBe(429);
    expect(calls()).toBe(1);
    setClock(T0 + 30_500);
    const second = await post(app, team.key, bindings);
    expect(calls()).toBe(1);
    expect(second.status).toBe(429);
    expect(await second.json()).toEqual({ error: "Rate limit exceeded", retry_after: 30 });
    expect(Object.fromEntries([...second.headers].filter(([name]) => name.startsWith("x-ratelimit") || name === "retry-after"))).toEqual({
      "x-ratelimit-limit": "600",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(T0_S + 60),
      "retry-after": "30",
    });
    // The object counted the requests it answered; none of the strict family.
    expect(await teamStub(team.teamId).peek(T0_S)).toBe(601);
    expect(await teamStub(team.teamId).peek(T0_S, strictCounter("push_subscribers"))).toBe(0);

    // The next window asks the object again.
    setClock(T0 + 60_000);
    expect((await post(app, team.key, bindings)).status).toBe(201);
    expect(calls()).toBe(2);
  });

  it("a raised limit (plan upgrade) asks the object again within the window", async () => {
    const { team, calls, bindings } = await filledTeam("free", ["push:write"], { count: 600 });
    const app = strictApp();
    expect((await post(app, team.key, bindings)).status).toBe(429);
    expect((await post(app, team.key, bindings)).status).toBe(429);
    expect(calls()).toBe(1);
    expect((await admin("PATCH", `teams/${team.teamId}`, { plan: "pro" })).status).toBe(200);
    const res = await post(app, team.key, bindings);
    expect(res.status).toBe(201);
    expect(calls()).toBe(2);
    // Counted in the raised default bucket (601 before, 602 now), then in the strict family.
    expect(await teamStub(team.teamId).peek(T0_S)).toBe(602);
    expect(await teamStub(team.teamId).peek(T0_S, strictCounter("push_subscribers"))).toBe(1);
  });

  it("a refusal of a strict family is not remembered for the default bucket: later requests still reach the object", async () => {
    const { team, calls, bindings } = await filledTeam("pro", ["push:write"], { counter: strictCounter("push_subscribers"), count: 30 });
    const app = strictApp();
    expect((await post(app, team.key, bindings)).status).toBe(429);
    expect((await post(app, team.key, bindings)).status).toBe(429);
    expect(calls()).toBe(2);
    expect(await teamStub(team.teamId).peek(T0_S)).toBe(2);
  });
});

/** A read and a write behind auth(), each counting how often its handler ran. */
function readApp(answer: (c: Context<AppEnv>) => Response | Promise<Response>) {
  const ran = { get: 0, post: 0 };
  const app = createRouter();
  app.use("*", requestContext());
  app.get("/thing", auth(), requireScope("push:read"), (c) => {
    ran.get++;
    return answer(c);
  });
  app.post("/thing", auth(), requireScope("push:read"), (c) => {
    ran.post++;
    return c.json({ ok: true }, 201);
  });
  app.onError(handleError);
  const send = (method: string, key: string, bindings: Env) =>
    Promise.resolve(
      app.fetch(
        new Request("http://app.test/thing", { method, headers: { authorization: `Bearer ${key}`, "cf-connecting-ip": "203.0.113.201" } }),
        bindings,
        createExecutionContext(),
      ),
    );
  return { ran, send };
}

describe("a read runs its route beside the counter call", () => {
  it("the route starts before the counter answers", async () => {
    setClock(T0 + 4_000);
    const team = await setupTeam({ plan: "pro", scopes: ["push:read"] });
    let routeStarted!: () => void;
    const started = new Promise<void>((resolve) => (routeStarted = resolve));
    let sawRoute: boolean | null = null;
    const real = env.RATE_LIMITER;
    // The counter call waits (at most 2 s) for the route to start: run one after the other, it never would.
    const namespace = {
      idFromName: (name: string) => real.idFromName(name),
      get: (id: DurableObjectId) => ({
        meter: async (...args: Parameters<RateLimiter["meter"]>) => {
          sawRoute = await Promise.race([started.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2_000))]);
          return real.get(id).meter(...args);
        },
      }),
    } as unknown as Env["RATE_LIMITER"];
    const { send } = readApp((c) => {
      routeStarted();
      return c.json({ ok: true });
    });
    const res = await send("GET", team.key, { ...env, RATE_LIMITER: namespace } as Env);
    expect(res.status).toBe(200);
    expect(sawRoute).toBe(true);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("5999");
    expect(await teamStub(team.teamId).peek(T0_S)).toBe(1);
  });

  it("a refusal wins over the route's answer, whatever it was", async () => {
    const { team, bindings } = await filledTeam("free", ["push:read"], { count: 600 });
    let status = 200;
    const { ran, send } = readApp((c) => (status === 200 ? c.json({ secret: "route answer" }) : c.json({ error: "Not found" }, 404)));
    const res = await send("GET", team.key, bindings);
    expect(ran.get).toBe(1);
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ error: "Rate limit exceeded", retry_after: 56 });
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    status = 404;
    const second = await send("GET", team.key, env as Env);
    expect(second.status).toBe(429);
  });

  it("once a refusal is remembered, a read's route does not run at all; a write's never runs when refused", async () => {
    const { team, calls, bindings } = await filledTeam("free", ["push:read"], { count: 600 });
    const { ran, send } = readApp((c) => c.json({ ok: true }));
    expect((await send("POST", team.key, bindings)).status).toBe(429);
    expect(ran.post).toBe(0);
    for (let i = 0; i < 3; i++) expect((await send("GET", team.key, bindings)).status).toBe(429);
    expect(ran.get).toBe(0);
    expect(calls()).toBe(1);
  });
});
