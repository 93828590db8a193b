// GET /api/v1/usage (spec: "Mail (partial) and usage", Usage object; issue 2: usage visibility).
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../src/platform/clock";
import { consumeQuota } from "../../src/platform/quota";
import { planTable, type Plan, type Service } from "../../src/platform/plans";
import { addKey, admin, call, expectError, json, setupTeam } from "../helpers/api";

const ALL_SERVICES = ["ai", "analytics", "flags", "forms", "logs", "mail", "push", "surveys", "webhooks"];
const METRICS: Record<string, string> = {
  mail: "emails_sent",
  ai: "ai_units",
  surveys: "responses",
  push: "notifications_sent",
  webhooks: "events_received",
  logs: "ingested_mb",
  forms: "submissions",
  analytics: "events",
  flags: "evaluations",
};

afterEach(() => setClock(null));

async function usage(key: string) {
  const res = await call("GET", "usage", { key });
  expect(res.status).toBe(200);
  return (await json(res)).data;
}

async function visible(scopes: string[]): Promise<string[]> {
  const team = await setupTeam({ scopes });
  return Object.keys((await usage(team.key)).services).sort();
}

describe("GET /usage shape", () => {
  it("is exactly the spec's Usage object for the current UTC month", async () => {
    setClock(Date.UTC(2031, 1, 10, 8, 30)); // February 2031 (28 days)
    const team = await setupTeam({ plan: "free", scopes: ["billing:read"] });
    const res = await call("GET", "usage", { key: team.key });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const body = await json(res);
    expect(Object.keys(body)).toEqual(["data"]);
    const data = body.data;
    expect(Object.keys(data).sort()).toEqual(["period_end", "period_start", "plan", "services"]);
    expect(data.plan).toBe("free");
    expect(data.period_start).toBe("2031-02-01T00:00:00.000Z");
    // The end of the month: the last instant of February (or, at the latest, the 1st of March).
    const end = Date.parse(data.period_end);
    expect(end).toBeGreaterThan(Date.UTC(2031, 1, 28, 23, 59, 58));
    expect(end).toBeLessThanOrEqual(Date.UTC(2031, 2, 1));
    expect(Object.keys(data.services).sort()).toEqual(ALL_SERVICES);
    for (const service of ALL_SERVICES) {
      const limit = planTable().free.monthly[service as Service];
      expect(typeof limit).toBe("number");
      expect({ service, value: data.services[service] }).toEqual({
        service,
        value: { metric: METRICS[service], used: 0, limit, remaining: limit, unlimited: false },
      });
    }
  });

  it("follows the calendar month: a 31-day month, and the month after", async () => {
    const team = await setupTeam({ scopes: ["mail:read"] });
    setClock(Date.UTC(2031, 11, 31, 23, 59, 59, 500));
    const december = await usage(team.key);
    expect(december.period_start).toBe("2031-12-01T00:00:00.000Z");
    expect(Date.parse(december.period_end)).toBeGreaterThan(Date.UTC(2031, 11, 31, 23, 59, 58));
    expect(Date.parse(december.period_end)).toBeLessThanOrEqual(Date.UTC(2032, 0, 1));
    setClock(Date.UTC(2032, 0, 1));
    const january = await usage(team.key);
    expect(january.period_start).toBe("2032-01-01T00:00:00.000Z");
  });

  it.each(["free", "starter", "pro", "scale"])("reports the %s plan and its limits", async (plan) => {
    const team = await setupTeam({ plan, scopes: ["billing:read"] });
    const data = await usage(team.key);
    expect(data.plan).toBe(plan);
    for (const [service, limit] of Object.entries(planTable()[plan as Plan].monthly)) {
      expect(data.services[service].limit).toBe(limit);
      expect(data.services[service].unlimited).toBe(false);
    }
  });

  it("enterprise: limit null, remaining null, unlimited true, used still counted", async () => {
    setClock(Date.UTC(2031, 4, 5));
    const team = await setupTeam({ plan: "enterprise", scopes: ["billing:read"] });
    await consumeQuota(env, { teamId: team.teamId, plan: "enterprise", ownerEmail: null }, "mail", 123_456);
    const data = await usage(team.key);
    expect(data.plan).toBe("enterprise");
    for (const service of ALL_SERVICES) {
      expect(data.services[service]).toEqual({
        metric: METRICS[service],
        used: service === "mail" ? 123_456 : 0,
        limit: null,
        remaining: null,
        unlimited: true,
      });
    }
  });
});

describe("used reflects consumption", () => {
  it("used and remaining follow consumeQuota, per service", async () => {
    setClock(Date.UTC(2031, 6, 14, 12));
    const team = await setupTeam({ plan: "free", scopes: ["billing:read"] });
    const o = { teamId: team.teamId, plan: "free", ownerEmail: null };
    await consumeQuota(env, o, "mail", 5);
    await consumeQuota(env, o, "ai", 3);
    await consumeQuota(env, o, "ai");
    const data = await usage(team.key);
    expect(data.services.mail).toEqual({ metric: "emails_sent", used: 5, limit: 3_000, remaining: 2_995, unlimited: false });
    expect(data.services.ai).toEqual({ metric: "ai_units", used: 4, limit: 10, remaining: 6, unlimited: false });
    expect(data.services.push.used).toBe(0);
  });

  it("remaining is 0 when the quota is used up", async () => {
    setClock(Date.UTC(2031, 6, 14, 12));
    const team = await setupTeam({ plan: "free", scopes: ["billing:read"] });
    await consumeQuota(env, { teamId: team.teamId, plan: "free", ownerEmail: null }, "ai", 10);
    expect((await usage(team.key)).services.ai).toEqual({ metric: "ai_units", used: 10, limit: 10, remaining: 0, unlimited: false });
  });

  it("counts the current month only, and only the caller's team", async () => {
    const team = await setupTeam({ plan: "free", scopes: ["billing:read"] });
    const other = await setupTeam({ plan: "free", scopes: ["billing:read"] });
    setClock(Date.UTC(2031, 7, 31, 23, 0));
    await consumeQuota(env, { teamId: team.teamId, plan: "free", ownerEmail: null }, "mail", 40);
    expect((await usage(team.key)).services.mail.used).toBe(40);
    expect((await usage(other.key)).services.mail.used).toBe(0);
    setClock(Date.UTC(2031, 8, 1, 0, 0));
    const september = await usage(team.key);
    expect(september.services.mail).toEqual({ metric: "emails_sent", used: 0, limit: 3_000, remaining: 3_000, unlimited: false });
  });

  it("a plan change shows the new limits at once", async () => {
    const team = await setupTeam({ plan: "free", scopes: ["billing:read"] });
    expect((await usage(team.key)).services.ai.limit).toBe(10);
    expect((await admin("PATCH", `teams/${team.teamId}`, { plan: "starter" })).status).toBe(200);
    const data = await usage(team.key);
    expect(data.plan).toBe("starter");
    expect(data.services.ai.limit).toBe(planTable().starter.monthly.ai);
  });
});

describe("visibility by scope", () => {
  it("billing:read sees every service", async () => {
    expect(await visible(["billing:read"])).toEqual(ALL_SERVICES);
  });

  it("mail:send sees mail only", async () => {
    expect(await visible(["mail:send"])).toEqual(["mail"]);
  });

  it("mail:read sees mail only", async () => {
    expect(await visible(["mail:read"])).toEqual(["mail"]);
  });

  it("mail:read + surveys:read sees mail and surveys", async () => {
    expect(await visible(["mail:read", "surveys:read"])).toEqual(["mail", "surveys"]);
  });

  it("a service's write scope also makes it visible (mail:send + push:write + logs:write)", async () => {
    expect(await visible(["mail:send", "push:write", "logs:write"])).toEqual(["logs", "mail", "push"]);
  });

  it("webhooks:write (which includes webhooks:read) shows webhooks", async () => {
    expect(await visible(["mail:send", "webhooks:write"])).toEqual(["mail", "webhooks"]);
  });

  it("billing:read with other scopes still sees everything", async () => {
    expect(await visible(["billing:read", "mail:send"])).toEqual(ALL_SERVICES);
  });

  it("a key with every scope sees everything", async () => {
    const team = await setupTeam();
    expect(Object.keys((await usage(team.key)).services).sort()).toEqual(ALL_SERVICES);
  });

  it.each([[["surveys:read"]], [["surveys:read", "surveys:write", "push:read", "logs:read", "webhooks:write", "audit:read"]]])(
    "a key with none of mail:send, mail:read, billing:read (%j) gets 403",
    async (scopes) => {
      const team = await setupTeam({ scopes });
      await expectError(await call("GET", "usage", { key: team.key }), 403, { error: "Insufficient scope" });
    },
  );

  it("visibility is per key, not per team", async () => {
    const team = await setupTeam({ scopes: ["mail:send"] });
    const billing = await addKey(team.teamId, ["billing:read"]);
    expect(Object.keys((await usage(team.key)).services)).toEqual(["mail"]);
    expect(Object.keys((await usage(billing.key)).services).sort()).toEqual(ALL_SERVICES);
  });
});
