// Rate limits (spec: Limits, "Rate-limit buckets", rules 1-5; issue 2: "Rate limits").
// Real Durable Object, pinned platform clock. Each test uses its own team or client IP, so counters
// never leak between tests.
import { createExecutionContext, env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { auth } from "../../src/platform/auth";
import { setClock } from "../../src/platform/clock";
import { handleError } from "../../src/platform/handle-error";
import { bucketLimit, type StrictFamily } from "../../src/platform/rate-limit/buckets";
import { IDLE_MS } from "../../src/platform/rate-limit/durable-object";
import { OWN_COUNTER } from "../../src/platform/rate-limit/buckets";
import { DurableObjectLimiter, getLimiter, NoopLimiter, windowOf } from "../../src/platform/rate-limit/limiter";
import {
  besideCount,
  clientNetwork,
  counterAddress,
  rateLimit,
  routedBlock,
  strictCounter,
  teamObject,
  type RateLimitOptions,
} from "../../src/platform/rate-limit/middleware";
import { ApiError } from "../../src/platform/errors";
import { requestContext } from "../../src/platform/request-context";
import { createRouter } from "../../src/platform/router";
import { ADMIN_TOKEN, addKey, call, expectError, json, setupTeam } from "../helpers/api";
import { ipCounter } from "../helpers/usage";

/** 2031-06-01T12:00:00Z: the start of a window (a multiple of 60 s). */
const T0 = Date.UTC(2031, 5, 1, 12, 0, 0);
const T0_S = T0 / 1000;

afterEach(() => setClock(null));

function freshIp(): string {
  const r = crypto.getRandomValues(new Uint8Array(3));
  return `198.51.${r[0]}.${(r[1] % 254) + 1}`;
}

/** The counter object of one bucket key, as the limiter names it (`<bucket>:<key>`). */
function counter(name: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
}

/**
 * A team's counter: its default bucket is the own counter of the team's object; each strict family
 * is a named counter in the same object (so one RPC counts both).
 */
function teamCounter(teamId: string, bucket: "default" | "strict" = "default", family?: StrictFamily) {
  const stub = counter(teamObject(teamId));
  const name = bucket === "strict" ? strictCounter(family!) : OWN_COUNTER;
  return {
    hit: (windowStart: number, cost = 1) => stub.hit(windowStart, cost, name),
    peek: (windowStart: number) => stub.peek(windowStart, name),
  };
}

function headers(res: Response) {
  return {
    limit: res.headers.get("x-ratelimit-limit"),
    remaining: res.headers.get("x-ratelimit-remaining"),
    reset: res.headers.get("x-ratelimit-reset"),
  };
}

async function expect429(res: Response, retryAfter: number): Promise<void> {
  expect(res.headers.get("retry-after")).toBe(String(retryAfter));
  await expectError(res, 429, { error: "Rate limit exceeded", retry_after: retryAfter });
}

/**
 * A small app composed like src/app.ts: request context, auth (default bucket, and the strict
 * family the route declares, as platform/route-access.ts tells it), extra buckets.
 */
function tinyApp(...buckets: RateLimitOptions[]) {
  const tiny = createRouter();
  tiny.use("*", requestContext());
  const strict = buckets.find((bucket) => bucket.bucket === "strict");
  tiny.use("/authed", auth({ strict: strict?.bucket === "strict" ? strict.family : undefined }));
  for (const bucket of buckets) {
    tiny.use("/authed", rateLimit(bucket));
    tiny.use("/public", rateLimit(bucket));
  }
  tiny.get("/authed", (c) => c.json({ ok: true }));
  tiny.get("/public", (c) => c.json({ ok: true }));
  tiny.onError(handleError);
  return tiny;
}

function tinyFetch(tiny: ReturnType<typeof tinyApp>, path: string, opts: { key?: string; ip?: string } = {}): Promise<Response> {
  const h: Record<string, string> = { "cf-connecting-ip": opts.ip ?? "203.0.113.77" };
  if (opts.key) h.authorization = `Bearer ${opts.key}`;
  return Promise.resolve(tiny.fetch(new Request(`http://app.test${path}`, { headers: h }), env, createExecutionContext()));
}

describe("besideCount: work beside a bucket's count", () => {
  const refusal = ApiError.rateLimited(7);
  it("answers the work's value when the count admits, and its error when it fails", async () => {
    expect(await besideCount(Promise.resolve(null), Promise.resolve(3), async () => expect.unreachable())).toBe(3);
    const failed = new Error("meter down");
    await expect(besideCount(Promise.resolve(null), Promise.reject(failed), async () => expect.unreachable())).rejects.toBe(failed);
  });
  it("throws the count's refusal first, after handing what the work took to undo", async () => {
    const undone: number[] = [];
    await expect(besideCount(Promise.resolve(refusal), Promise.resolve(5), async (taken) => undone.push(taken))).rejects.toBe(refusal);
    expect(undone).toEqual([5]);
    // The work failed too: the refusal still comes first, and nothing was taken to undo.
    await expect(besideCount(Promise.resolve(refusal), Promise.reject(new Error("cap")), async () => expect.unreachable())).rejects.toBe(refusal);
    // An undo that fails does not hide the refusal.
    await expect(besideCount(Promise.resolve(refusal), Promise.resolve(1), () => Promise.reject(new Error("gone")))).rejects.toBe(refusal);
  });
});

describe("windowOf", () => {
  it("starts windows at floor(now/60)*60 and resets 60 s later", () => {
    expect(windowOf(0)).toEqual({ start: 0, reset: 60, retryAfter: 60 });
    expect(windowOf(T0)).toEqual({ start: T0_S, reset: T0_S + 60, retryAfter: 60 });
    expect(windowOf(T0 + 59_999).start).toBe(T0_S);
    expect(windowOf(T0 + 60_000)).toEqual({ start: T0_S + 60, reset: T0_S + 120, retryAfter: 60 });
    expect(windowOf(T0 - 1).start).toBe(T0_S - 60);
  });

  it("retryAfter is the time left rounded up, never 0", () => {
    expect(windowOf(T0 + 200).retryAfter).toBe(60);
    expect(windowOf(T0 + 1_000).retryAfter).toBe(59);
    expect(windowOf(T0 + 1_001).retryAfter).toBe(59);
    expect(windowOf(T0 + 30_000).retryAfter).toBe(30);
    expect(windowOf(T0 + 30_001).retryAfter).toBe(30);
    expect(windowOf(T0 + 59_000).retryAfter).toBe(1);
    expect(windowOf(T0 + 59_500).retryAfter).toBe(1);
    expect(windowOf(T0 + 59_999).retryAfter).toBe(1);
    for (let ms = T0; ms < T0 + 60_000; ms += 137) {
      const { retryAfter } = windowOf(ms);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
  });
});

describe("bucket limits", () => {
  it("match the specification's table", () => {
    expect(bucketLimit("strict")).toBe(30);
    expect(bucketLimit("public")).toBe(200);
    expect(bucketLimit("log_ingest")).toBe(300);
    expect(bucketLimit("anonymous")).toBe(100);
    const plans: Array<[string, number | null]> = [
      ["free", 600],
      ["starter", 3_000],
      ["pro", 6_000],
      ["scale", 30_000],
      ["enterprise", null],
    ];
    for (const [plan, limit] of plans) {
      expect({ plan, d: bucketLimit("default", plan) }).toEqual({ plan, d: limit });
    }
    // An unknown plan is limited like free, never unlimited.
    expect(bucketLimit("default", "platinum")).toBe(600);
  });
});

describe("x-ratelimit-* headers", () => {
  it.each([
    ["free", 600],
    ["starter", 3_000],
    ["pro", 6_000],
    ["scale", 30_000],
  ])("%s plan: limit %i, remaining counts down, reset at the end of the window", async (plan, limit) => {
    setClock(T0 + 17_250);
    const team = await setupTeam({ plan });
    for (let i = 1; i <= 3; i++) {
      const res = await call("GET", "usage", { key: team.key });
      expect(res.status).toBe(200);
      expect(headers(res)).toEqual({ limit: String(limit), remaining: String(limit - i), reset: String(T0_S + 60) });
    }
  });

  it("reset is floor(now/60)*60+60 at the first and the last millisecond of a window", async () => {
    const team = await setupTeam();
    for (const at of [T0, T0 + 59_999, T0 + 60_000]) {
      setClock(at);
      const res = await call("GET", "usage", { key: team.key });
      expect(res.headers.get("x-ratelimit-reset")).toBe(String(Math.floor(at / 60_000) * 60 + 60));
    }
  });

  it("are lowercase and present on 200, 403, 404-of-a-product and 429 responses of an authenticated caller", async () => {
    setClock(T0 + 5_000);
    const team = await setupTeam({ plan: "free", scopes: ["surveys:read"] });
    const forbidden = await call("GET", "usage", { key: team.key });
    expect(forbidden.status).toBe(403);
    expect(headers(forbidden)).toEqual({ limit: "600", remaining: "599", reset: String(T0_S + 60) });
    await teamCounter(team.teamId).hit(T0_S, 599);
    const limited = await call("GET", "usage", { key: team.key });
    expect(limited.status).toBe(429);
    expect(headers(limited)).toEqual({ limit: "600", remaining: "0", reset: String(T0_S + 60) });
    expect(limited.headers.get("x-request-id")).toBeTruthy();
    expect([...limited.headers.keys()].filter((k) => k.startsWith("x-ratelimit"))).toEqual(["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]);
  });
  it("are present on the 404 of an unknown path below an authenticated router (the request was counted)", async () => {
    setClock(T0 + 5_000);
    const team = await setupTeam({ plan: "pro" });
    const res = await call("GET", "usage/no-such-thing", { key: team.key });
    expect(res.status).toBe(404);
    // The request was counted in the team's default bucket...
    expect(await teamCounter(team.teamId).peek(T0_S)).toBe(1);
    // ...so its response must carry that bucket's headers (spec Limits rule 3).
    expect(headers(res)).toEqual({ limit: "6000", remaining: "5999", reset: String(T0_S + 60) });
  });

  it("the public reference pages are counted per IP in the 100/60 s fallback and carry its headers", async () => {
    setClock(T0 + 5_000);
    const ip = freshIp();
    const res = await call("GET", "openapi.json", { ip });
    expect(res.status).toBe(200);
    expect(headers(res)).toEqual({ limit: "100", remaining: "99", reset: String(T0_S + 60) });
    await ipCounter("anonymous", ip).hit(T0_S, 99);
    await expect429(await call("GET", "docs", { ip }), 55);
  });
});

describe("429 Rate limit exceeded", () => {
  it("free plan: the 600th request passes with remaining 0, the 601st answers 429", async () => {
    setClock(T0 + 10_000);
    const team = await setupTeam({ plan: "free" });
    // 599 requests of this window, counted straight in the team's Durable Object.
    expect(await teamCounter(team.teamId).hit(T0_S, 599)).toBe(599);
    const last = await call("GET", "usage", { key: team.key });
    expect(last.status).toBe(200);
    expect(headers(last)).toEqual({ limit: "600", remaining: "0", reset: String(T0_S + 60) });
    const over = await call("GET", "usage", { key: team.key });
    expect(headers(over)).toEqual({ limit: "600", remaining: "0", reset: String(T0_S + 60) });
    await expect429(over, 50);
  });

  it("free plan: 600 concurrent hits on the counter, each counted once, then a real request answers 429", async () => {
    setClock(T0 + 1_500);
    const team = await setupTeam({ plan: "free" });
    const stub = teamCounter(team.teamId);
    // Concurrent hits: the object counts each exactly once (every count from 1 to 600 seen once).
    const counts = await Promise.all(Array.from({ length: 600 }, () => stub.hit(T0_S)));
    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
    await expect429(await call("GET", "usage", { key: team.key }), 59);
  });

  it("retry_after at 59.5 s into the window is 1, at 0.2 s it is 60, at 30 s it is 30", async () => {
    const team = await setupTeam({ plan: "free" });
    await teamCounter(team.teamId).hit(T0_S, 600);
    for (const [offset, expected] of [
      [59_500, 1],
      [200, 60],
      [30_000, 30],
      [59_999, 1],
      [0, 60],
    ]) {
      setClock(T0 + offset);
      await expect429(await call("GET", "usage", { key: team.key }), expected);
    }
  });

  it("the window rolls over after 60 s: the counter starts again from zero", async () => {
    const team = await setupTeam({ plan: "free" });
    setClock(T0 + 45_000);
    await teamCounter(team.teamId).hit(T0_S, 600);
    await expect429(await call("GET", "usage", { key: team.key }), 15);
    setClock(T0 + 60_000);
    const next = await call("GET", "usage", { key: team.key });
    expect(next.status).toBe(200);
    expect(headers(next)).toEqual({ limit: "600", remaining: "599", reset: String(T0_S + 120) });
    // The new window counts from zero: only this request is in it.
    expect(await teamCounter(team.teamId).peek(T0_S + 60)).toBe(1);
  });

  it("refused requests keep counting but stay refused until the window ends", async () => {
    setClock(T0 + 20_000);
    const team = await setupTeam({ plan: "free" });
    await teamCounter(team.teamId).hit(T0_S, 600);
    for (let i = 0; i < 3; i++) expect((await call("GET", "usage", { key: team.key })).status).toBe(429);
    setClock(T0 + 59_999);
    expect((await call("GET", "usage", { key: team.key })).status).toBe(429);
  });
});

describe("counters per team", () => {
  it("two keys of one team share the counter", async () => {
    setClock(T0 + 3_000);
    const team = await setupTeam({ plan: "pro" });
    const second = await addKey(team.teamId, ["billing:read"]);
    expect(headers(await call("GET", "usage", { key: team.key })).remaining).toBe("5999");
    expect(headers(await call("GET", "usage", { key: second.key })).remaining).toBe("5998");
    expect(headers(await call("GET", "usage", { key: team.key })).remaining).toBe("5997");
    expect(await teamCounter(team.teamId).peek(T0_S)).toBe(3);
  });

  it("a team exhausted through one key is refused on its other key", async () => {
    setClock(T0 + 3_000);
    const team = await setupTeam({ plan: "free" });
    const second = await addKey(team.teamId, ["mail:read"]);
    await teamCounter(team.teamId).hit(T0_S, 599);
    expect((await call("GET", "usage", { key: team.key })).status).toBe(200);
    await expect429(await call("GET", "usage", { key: second.key }), 57);
  });

  it("different teams are independent", async () => {
    setClock(T0 + 3_000);
    const a = await setupTeam({ plan: "free" });
    const b = await setupTeam({ plan: "free" });
    await teamCounter(a.teamId).hit(T0_S, 600);
    expect((await call("GET", "usage", { key: a.key })).status).toBe(429);
    const res = await call("GET", "usage", { key: b.key });
    expect(res.status).toBe(200);
    expect(headers(res).remaining).toBe("599");
  });

  it("the client IP does not matter for a team's counter", async () => {
    setClock(T0 + 3_000);
    const team = await setupTeam({ plan: "pro" });
    await call("GET", "usage", { key: team.key, ip: freshIp() });
    const res = await call("GET", "usage", { key: team.key, ip: freshIp() });
    expect(headers(res).remaining).toBe("5998");
  });
});

describe("enterprise", () => {
  it("is not rate limited: no x-ratelimit headers and no Durable Object call", async () => {
    setClock(T0 + 3_000);
    const team = await setupTeam({ plan: "enterprise" });
    for (let i = 0; i < 25; i++) {
      const res = await call("GET", "usage", { key: team.key });
      expect(res.status).toBe(200);
      expect(headers(res)).toEqual({ limit: null, remaining: null, reset: null });
    }
    expect(await teamCounter(team.teamId).peek(T0_S)).toBe(0);
  });

  it("ignores even a full counter", async () => {
    setClock(T0 + 3_000);
    const team = await setupTeam({ plan: "enterprise" });
    await teamCounter(team.teamId).hit(T0_S, 1_000_000);
    const res = await call("GET", "usage", { key: team.key });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBeNull();
  });

  it("a team moved from free to enterprise is no longer limited", async () => {
    setClock(T0 + 3_000);
    const team = await setupTeam({ plan: "free" });
    await teamCounter(team.teamId).hit(T0_S, 600);
    expect((await call("GET", "usage", { key: team.key })).status).toBe(429);
    const patched = await call("PATCH", `admin/teams/${team.teamId}`, { key: ADMIN_TOKEN, body: { plan: "enterprise" } });
    expect(patched.status).toBe(200);
    expect((await call("GET", "usage", { key: team.key })).status).toBe(200);
  });
});

describe("unauthenticated fallback: 100 per 60 s per client IP", () => {
  it("the 101st request without a key from one IP answers 429 instead of 401; another IP is unaffected", async () => {
    setClock(T0 + 12_000);
    const ip = freshIp();
    const responses = await Promise.all(Array.from({ length: 100 }, () => call("GET", "usage", { ip })));
    expect(responses.map((r) => r.status)).toEqual(Array(100).fill(401));
    expect(new Set(responses.map((r) => r.headers.get("x-ratelimit-limit")))).toEqual(new Set(["100"]));
    expect(new Set(responses.map((r) => r.headers.get("x-ratelimit-reset")))).toEqual(new Set([String(T0_S + 60)]));
    const remaining = responses.map((r) => Number(r.headers.get("x-ratelimit-remaining"))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i));
    for (const res of responses) await expectError(res, 401, { error: "Invalid or missing API key" });
    const over = await call("GET", "usage", { ip });
    expect(headers(over)).toEqual({ limit: "100", remaining: "0", reset: String(T0_S + 60) });
    await expect429(over, 48);

    const other = await call("GET", "usage", { ip: freshIp() });
    await expectError(other, 401, { error: "Invalid or missing API key" });
  });

  it("unknown keys and wrong admin tokens count in the same per-IP bucket", async () => {
    setClock(T0 + 12_000);
    const ip = freshIp();
    await ipCounter("anonymous", ip).hit(T0_S, 98);
    expect((await call("GET", "usage", { ip, key: "edp_unknown" })).status).toBe(401);
    expect((await call("GET", `admin/teams/${crypto.randomUUID()}`, { ip, key: "wrong" })).status).toBe(401);
    await expect429(await call("GET", "usage", { ip, key: "edp_unknown" }), 48);
    await expect429(await call("POST", "admin/teams", { ip, key: "wrong", body: { name: "x" } }), 48);
  });

  it("a valid key from an exhausted IP is counted on its team, not refused", async () => {
    setClock(T0 + 12_000);
    const ip = freshIp();
    await ipCounter("anonymous", ip).hit(T0_S, 100);
    expect((await call("GET", "usage", { ip })).status).toBe(429);
    const team = await setupTeam({ plan: "pro" });
    const res = await call("GET", "usage", { ip, key: team.key });
    expect(res.status).toBe(200);
    expect(headers(res).limit).toBe("6000");
  });

  it("the per-IP fallback resets at the window rollover", async () => {
    const ip = freshIp();
    setClock(T0 + 30_000);
    await ipCounter("anonymous", ip).hit(T0_S, 100);
    expect((await call("GET", "usage", { ip })).status).toBe(429);
    setClock(T0 + 60_000);
    const res = await call("GET", "usage", { ip });
    expect(res.status).toBe(401);
    expect(headers(res).remaining).toBe("99");
  });
});

describe("strict overwrites default", () => {
  it("headers show the strict bucket (limit 30); the 31st request answers 429 though default is not exceeded", async () => {
    setClock(T0 + 8_000);
    const team = await setupTeam({ plan: "pro" });
    const tiny = tiny_strict();
    for (let i = 1; i <= 30; i++) {
      const res = await tinyFetch(tiny, "/authed", { key: team.key });
      expect(res.status).toBe(200);
      expect(headers(res)).toEqual({ limit: "30", remaining: String(30 - i), reset: String(T0_S + 60) });
    }
    const over = await tinyFetch(tiny, "/authed", { key: team.key });
    expect(headers(over)).toEqual({ limit: "30", remaining: "0", reset: String(T0_S + 60) });
    await expect429(over, 52);
    // The default bucket counted these requests too and is far from its 6,000.
    expect(await teamCounter(team.teamId).peek(T0_S)).toBe(31);
    expect(await teamCounter(team.teamId, "strict", "push_subscribers").peek(T0_S)).toBe(31);
    // A route with only the default bucket still answers.
    const usage = await call("GET", "usage", { key: team.key });
    expect(usage.status).toBe(200);
    expect(headers(usage)).toEqual({ limit: "6000", remaining: String(6000 - 32), reset: String(T0_S + 60) });
  });

  it("a request fails when the default bucket is exceeded even if strict is not; headers show default", async () => {
    setClock(T0 + 8_000);
    const team = await setupTeam({ plan: "free" });
    await teamCounter(team.teamId).hit(T0_S, 600);
    const res = await tinyFetch(tiny_strict(), "/authed", { key: team.key });
    expect(headers(res)).toEqual({ limit: "600", remaining: "0", reset: String(T0_S + 60) });
    await expect429(res, 52);
  });

  it("strict is per team: two keys of a team share it, another team has its own", async () => {
    setClock(T0 + 8_000);
    const team = await setupTeam({ plan: "pro" });
    const second = await addKey(team.teamId, ["mail:send"]);
    const other = await setupTeam({ plan: "pro" });
    await teamCounter(team.teamId, "strict", "push_subscribers").hit(T0_S, 29);
    const tiny = tiny_strict();
    expect(headers(await tinyFetch(tiny, "/authed", { key: second.key })).remaining).toBe("0");
    expect((await tinyFetch(tiny, "/authed", { key: team.key })).status).toBe(429);
    const fresh = await tinyFetch(tiny, "/authed", { key: other.key });
    expect(fresh.status).toBe(200);
    expect(headers(fresh).remaining).toBe("29");
  });

  it("public bucket: 200 per 60 s keyed on the client IP", async () => {
    setClock(T0 + 8_000);
    const tiny = tinyApp({ bucket: "public" });
    const ip = freshIp();
    const first = await tinyFetch(tiny, "/public", { ip });
    expect(headers(first)).toEqual({ limit: "200", remaining: "199", reset: String(T0_S + 60) });
    await ipCounter("public", ip).hit(T0_S, 199);
    await expect429(await tinyFetch(tiny, "/public", { ip }), 52);
    expect(headers(await tinyFetch(tiny, "/public", { ip: freshIp() })).remaining).toBe("199");
  });
});

function tiny_strict(family: StrictFamily = "push_subscribers") {
  return tinyApp({ bucket: "strict", family });
}

describe("strict families", () => {
  it("each endpoint family of a team has its own strict counter: a full family refuses, the others answer", async () => {
    setClock(T0 + 8_000);
    const team = await setupTeam({ plan: "pro" });
    await teamCounter(team.teamId, "strict", "survey_start").hit(T0_S, 30);
    await expect429(await tinyFetch(tiny_strict("survey_start"), "/authed", { key: team.key }), 52);
    for (const family of ["push_subscribers", "audit_share"] as const) {
      const res = await tinyFetch(tiny_strict(family), "/authed", { key: team.key });
      expect({ family, status: res.status }).toEqual({ family, status: 200 });
      expect(headers(res).remaining).toBe("29");
    }
  });
});

describe("RATE_LIMITS=off", () => {
  it("getLimiter returns a limiter that never refuses", async () => {
    const off = getLimiter({ ...env, RATE_LIMITS: "off" });
    expect(off).toBeInstanceOf(NoopLimiter);
    setClock(T0 + 4_000);
    for (let i = 0; i < 50; i++) {
      const result = await off.hit(`default:team:${crypto.randomUUID()}`, 1);
      expect(result).toEqual({ allowed: true, limit: 1, remaining: 1, reset: T0_S + 60, retryAfter: 56 });
    }
    const key = `strict:team:${crypto.randomUUID()}`;
    for (let i = 0; i < 40; i++) expect((await off.hit(key, 30)).allowed).toBe(true);
    // Nothing was counted in the Durable Object.
    expect(await counter(key).peek(T0_S)).toBe(0);
  });

  it("with RATE_LIMITS on, getLimiter returns the Durable Object limiter, and it refuses past the limit", async () => {
    const on = getLimiter(env);
    expect(on).toBeInstanceOf(DurableObjectLimiter);
    expect(getLimiter(env)).toBe(on);
    setClock(T0 + 4_000);
    const key = `strict:team:${crypto.randomUUID()}`;
    expect(await on.hit(key, 2)).toEqual({ allowed: true, limit: 2, remaining: 1, reset: T0_S + 60, retryAfter: 56 });
    expect((await on.hit(key, 2)).allowed).toBe(true);
    expect(await on.hit(key, 2)).toEqual({ allowed: false, limit: 2, remaining: 0, reset: T0_S + 60, retryAfter: 56 });
  });

  it("the app with RATE_LIMITS=off answers past the limit where the real config refuses", async () => {
    setClock(T0 + 4_000);
    const team = await setupTeam({ plan: "free" });
    await teamCounter(team.teamId).hit(T0_S, 600);
    const request = () => new Request("http://app.test/api/v1/usage", { headers: { authorization: `Bearer ${team.key}`, "cf-connecting-ip": "203.0.113.9" } });
    expect((await call("GET", "usage", { key: team.key })).status).toBe(429);
    const offEnv = { ...env, RATE_LIMITS: "off" };
    for (let i = 0; i < 5; i++) {
      const res = await app.fetch(request(), offEnv, createExecutionContext());
      expect(res.status).toBe(200);
      expect((await json(res)).data.plan).toBe("free");
    }
    // Unauthenticated traffic is not refused either.
    const ip = freshIp();
    await ipCounter("anonymous", ip).hit(T0_S, 100);
    const anon = await app.fetch(new Request("http://app.test/api/v1/usage", { headers: { "cf-connecting-ip": ip } }), offEnv, createExecutionContext());
    expect(anon.status).toBe(401);
  });
});

describe("retention of counters", () => {
  it("an object whose key is no longer used deletes its storage at its alarm; a key still in use keeps counting", async () => {
    const idle = counter(`public:ip:${freshIp()}`);
    await idle.hit(T0_S, 3);
    // The alarm runs two windows after the last new window: pretend that time has passed.
    await runInDurableObject(idle, async (_instance, state) => {
      state.storage.sql.exec("UPDATE seen SET at = at - ?", IDLE_MS + 1);
    });
    expect(await runDurableObjectAlarm(idle)).toBe(true);
    await runInDurableObject(idle, async (_instance, state) => {
      expect(state.storage.sql.exec("SELECT COUNT(*) AS n FROM counters").one().n).toBe(0);
    });
    // Counting again works on the same instance.
    expect(await idle.hit(T0_S + 60)).toBe(1);

    const busy = counter(`public:ip:${freshIp()}`);
    await busy.hit(T0_S, 2);
    expect(await runDurableObjectAlarm(busy)).toBe(true);
    expect(await busy.peek(T0_S)).toBe(2);
  });
});

describe("per-IP buckets count IPv6 per /64 (regression, issue 37 finding 5)", () => {
  it("clientNetwork: IPv4 as is, IPv6 by its /64, IPv4-mapped as IPv4", () => {
    expect(clientNetwork("198.51.100.7")).toBe("198.51.100.7");
    expect(clientNetwork("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(clientNetwork("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(clientNetwork("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(clientNetwork("unknown")).toBe("unknown");
  });

  it("two addresses of one IPv6 /64 share the anonymous bucket; another /64 does not", async () => {
    setClock(T0 + 5_000);
    const r = crypto.getRandomValues(new Uint16Array(2));
    const net = `2001:db8:${r[0].toString(16)}:${r[1].toString(16)}`;
    expect((await call("GET", "openapi.json", { ip: `${net}::1` })).status).toBe(200);
    await ipCounter("anonymous", `${net}::1`).hit(T0_S, 99);
    await expect429(await call("GET", "docs", { ip: `${net}:aaaa:bbbb:cccc:dddd` }), 55);
    expect((await call("GET", "openapi.json", { ip: `2001:db8:${r[0].toString(16)}:${(r[1] ^ 1).toString(16)}::1` })).status).toBe(200);
  });
});

describe("per-IP counters live in the object of their routed block, each address counted exactly", () => {
  it("an IPv4 address counts in its /24's object, an IPv6 /64 in its /48's, under a counter of its own", () => {
    expect(routedBlock("198.51.100.7")).toBe("198.51.100.0/24");
    expect(routedBlock("2001:db8:1:2::/64")).toBe("2001:db8:1::/48");
    expect(routedBlock("unknown")).toBeNull();
    expect(counterAddress("public", "ip:198.51.100.7")).toEqual({ object: "public:block:198.51.100.0/24", counter: "ip:198.51.100.7" });
    expect(counterAddress("anonymous", `ip:${clientNetwork("2001:db8:1:2::9")}`)).toEqual({
      object: "anonymous:block:2001:db8:1::/48",
      counter: "ip:2001:db8:1:2::/64",
    });
    // Anything else keeps an object of its own.
    expect(counterAddress("public", "ip:unknown")).toEqual({ object: "public:ip:unknown", counter: OWN_COUNTER });
    expect(counterAddress("anonymous", "token:abc")).toEqual({ object: "anonymous:token:abc", counter: OWN_COUNTER });
  });

  it("a full address is refused while its neighbour in the same /24 keeps its own window", async () => {
    setClock(T0 + 9_000);
    const tiny = tinyApp({ bucket: "public" });
    const r = crypto.getRandomValues(new Uint8Array(2));
    const full = `203.0.${r[0]}.10`;
    const neighbour = `203.0.${r[0]}.11`;
    await ipCounter("public", full).hit(T0_S, 200);
    await expect429(await tinyFetch(tiny, "/public", { ip: full }), 51);
    expect(headers(await tinyFetch(tiny, "/public", { ip: neighbour }))).toEqual({ limit: "200", remaining: "199", reset: String(T0_S + 60) });
    expect(await ipCounter("public", neighbour).peek(T0_S)).toBe(1);
    expect(await ipCounter("public", full).peek(T0_S)).toBe(201);
  });

  it("the first new window of any address drops every address's older windows: a block that stays busy keeps no rows of addresses gone", async () => {
    const r = crypto.getRandomValues(new Uint8Array(2));
    const block = `203.1.${r[0]}`;
    await ipCounter("public", `${block}.1`).hit(T0_S, 3);
    await ipCounter("public", `${block}.2`).hit(T0_S, 4);
    const { stub } = ipCounter("public", `${block}.3`);
    const rows = () =>
      runInDurableObject(stub, (_instance, state) =>
        state.storage.sql.exec<{ name: string; start: number }>("SELECT name, start FROM counters ORDER BY name").toArray(),
      );
    expect(await rows()).toHaveLength(2);
    await ipCounter("public", `${block}.3`).hit(T0_S + 60);
    expect(await rows()).toEqual([{ name: `ip:${block}.3`, start: T0_S + 60 }]);
    // The addresses gone start again from nothing when they come back.
    expect(await ipCounter("public", `${block}.1`).hit(T0_S + 60)).toBe(1);
    expect(await ipCounter("public", `${block}.3`).hit(T0_S + 60)).toBe(2);
  });

  it("a network's caps beside it: minute caps (`ip:<network>:…`) go with the windows, daily caps (`ipday:…`) at the first new day of any network", async () => {
    const r = crypto.getRandomValues(new Uint8Array(2));
    const block = `203.2.${r[0]}`;
    const DAY = 86_400;
    const day0 = Math.floor(T0_S / DAY) * DAY;
    const { stub } = ipCounter("public", `${block}.1`);
    const rows = () =>
      runInDurableObject(stub, (_instance, state) =>
        state.storage.sql.exec<{ name: string; start: number; count: number }>("SELECT name, start, count FROM counters ORDER BY name").toArray(),
      );
    const daily = (address: string) => ({ name: `ipday:${block}.${address}:forms:t`, limit: 16, windowSeconds: DAY });
    expect(await stub.hitAll(T0_S, [{ name: `ip:${block}.1`, limit: 200 }, { name: `ip:${block}.1:form:a`, limit: 10 }, daily("1")])).toEqual([1, 1, 1]);
    expect(await stub.hitAll(T0_S, [daily("2")])).toEqual([1]);
    // A new minute drops every network's older windows, its minute caps with them; the days stay.
    await stub.hitAll(T0_S + 60, [{ name: `ip:${block}.2`, limit: 200 }]);
    expect(await rows()).toEqual([
      { name: `ip:${block}.2`, start: T0_S + 60, count: 1 },
      { name: `ipday:${block}.1:forms:t`, start: day0, count: 1 },
      { name: `ipday:${block}.2:forms:t`, start: day0, count: 1 },
    ]);
    expect(await stub.hitAll(T0_S + 120, [daily("1")])).toEqual([2]);
    // The first new day of any network drops every network's older days.
    expect(await stub.hitAll(day0 + DAY, [daily("1")])).toEqual([1]);
    expect((await rows()).filter((row) => row.name.startsWith("ipday:"))).toEqual([{ name: `ipday:${block}.1:forms:t`, start: day0 + DAY, count: 1 }]);
  });
});
