// The settings module (src/platform/config.ts): defaults in one place, APP_URL trimmed once, and the
// secrets checked on an isolate's first request: a missing or unusable one answers 500 naming it
// (never its value), logged once, while /health stays up.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import { ADMIN_TOKEN_MIN, DEFAULTS, SIGNING_KEY_MIN, secretProblems, settings } from "../../src/platform/config";

afterEach(() => vi.restoreAllMocks());

async function get(path: string, bindings: Env, headers: Record<string, string> = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch!(new Request(`https://app.test${path}`, { headers }) as Request<unknown, IncomingRequestCfProperties>, bindings, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("settings", () => {
  it("applies each default to an unset or empty var, and trims APP_URL's trailing slashes once", () => {
    const none = settings({});
    expect(none).toEqual({
      appUrl: DEFAULTS.APP_URL,
      appOrigin: "http://localhost:8787",
      https: false,
      rateLimits: true,
      requestLog: true,
      allowPrivateTargets: false,
      mailTransport: "outbox",
      mailFrom: DEFAULTS.MAIL_FROM,
      sandboxDomain: DEFAULTS.SANDBOX_DOMAIN,
      sandboxCaps: { hourly: 50, daily: 200 },
      dnsResolverUrl: DEFAULTS.DNS_RESOLVER_URL,
      relayForwardsPerMinute: 600,
    });
    expect(settings({ SANDBOX_HOURLY_CAP: "5", SANDBOX_DAILY_CAP: "nope" }).sandboxCaps).toEqual({ hourly: 5, daily: 200 });
    expect(settings({ APP_URL: "", MAIL_TRANSPORT: "" })).toMatchObject({ appUrl: DEFAULTS.APP_URL, mailTransport: "outbox" });
    const set = settings({
      APP_URL: "https://api.example.com/base//",
      RATE_LIMITS: "off",
      REQUEST_LOG: "off",
      ALLOW_PRIVATE_TARGETS: "true",
      SANDBOX_DOMAIN: "Sandbox.Example.COM",
    });
    expect(set).toMatchObject({
      appUrl: "https://api.example.com/base",
      appOrigin: "https://api.example.com",
      https: true,
      rateLimits: false,
      requestLog: false,
      allowPrivateTargets: true,
      sandboxDomain: "sandbox.example.com",
    });
    // Only the exact words switch: anything else keeps the safe default.
    expect(settings({ RATE_LIMITS: "0", ALLOW_PRIVATE_TARGETS: "1" })).toMatchObject({ rateLimits: true, allowPrivateTargets: false });
  });

  it("the test environment's APP_URL comes back as configured", () => {
    expect(settings(env).appUrl).toBe(env.APP_URL.replace(/\/+$/, ""));
  });
});

describe("secretProblems", () => {
  const good = { ADMIN_TOKEN: "a".repeat(ADMIN_TOKEN_MIN), ENCRYPTION_KEY: btoa("k".repeat(32)), SIGNING_KEY: "s".repeat(SIGNING_KEY_MIN) };

  it("accepts present secrets of a usable length and format (the test environment's too)", () => {
    expect(secretProblems(good)).toEqual([]);
    expect(secretProblems(env)).toEqual([]);
    // base64url without padding, as the dev server's generator may write it.
    expect(secretProblems({ ...good, ENCRYPTION_KEY: btoa("k".repeat(32)).replace(/=+$/, "").replace(/\+/g, "-") })).toEqual([]);
  });

  it("names each missing, short or malformed secret, never its value", () => {
    expect(secretProblems({})).toEqual(["ADMIN_TOKEN is not set", "ENCRYPTION_KEY is not set", "SIGNING_KEY is not set"]);
    expect(secretProblems({ ...good, ADMIN_TOKEN: "" })).toEqual(["ADMIN_TOKEN is not set"]);
    const bad = { ADMIN_TOKEN: "short-token", ENCRYPTION_KEY: btoa("k".repeat(16)), SIGNING_KEY: "tiny-signing-key" };
    const problems = secretProblems(bad);
    expect(problems).toEqual([
      `ADMIN_TOKEN is shorter than ${ADMIN_TOKEN_MIN} characters`,
      "ENCRYPTION_KEY is not base64 of 32 bytes",
      `SIGNING_KEY is shorter than ${SIGNING_KEY_MIN} characters`,
    ]);
    for (const value of Object.values(bad)) expect(problems.join(" ")).not.toContain(value);
    expect(secretProblems({ ...good, ENCRYPTION_KEY: "not base64 at all!" })).toEqual(["ENCRYPTION_KEY is not base64 of 32 bytes"]);
  });
});

describe("the secrets check on the way in", () => {
  it("answers 500 naming the missing setting on every request, logs it once, and keeps /health up", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const broken = { ...env, SIGNING_KEY: undefined } as unknown as Env;
    for (const path of ["/api/v1/usage", "/api/v1/logs/projects", "/console/sign-in"]) {
      const res = await get(path, broken, { "x-request-id": "cfg-check" });
      expect(res.status).toBe(500);
      expect(res.headers.get("x-request-id")).toBe("cfg-check");
      const body = JSON.stringify(await res.json());
      expect(body).toContain("Server misconfigured: SIGNING_KEY is not set");
    }
    // Another environment object with the same problem (the runtime may hand one per request): no second line.
    expect((await get("/api/v1/usage", { ...broken } as Env)).status).toBe(500);
    const logged = errors.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(logged).toEqual([{ level: "error", msg: "server misconfigured", request_id: "cfg-check", problems: ["SIGNING_KEY is not set"] }]);
    expect((await get("/health", broken)).status).toBe(200);
  });

  it("never shows a secret's value in the answer", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const weak = { ...env, ADMIN_TOKEN: "weak-admin" } as Env;
    const res = await get("/api/v1/admin/teams/x", weak, { authorization: "Bearer weak-admin" });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).toContain(`ADMIN_TOKEN is shorter than ${ADMIN_TOKEN_MIN} characters`);
    expect(text).not.toContain("weak-admin");
  });

  it("lets requests through when the secrets are usable", async () => {
    const res = await get("/api/v1/usage", env);
    expect(res.status).toBe(401);
  });
});
