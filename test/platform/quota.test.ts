// Monthly quotas and usage warnings (spec: Limits, "Monthly plan quota"; Events 5;
// issue 2: "Monthly quotas and usage").
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../src/platform/clock";
import { ApiError, renderError } from "../../src/platform/errors";
import { planTable, services, type Service } from "../../src/platform/plans";
import { consumeQuota, monthOf, releaseQuota, type QuotaOwner } from "../../src/platform/quota";
import { setupTeam } from "../helpers/api";
import { usedOf } from "../helpers/usage";

const JAN_31_2359 = Date.UTC(2032, 0, 31, 23, 59, 0);
const FEB_1_0000 = Date.UTC(2032, 1, 1, 0, 0, 0);
const MID_MARCH = Date.UTC(2032, 2, 15, 10, 0, 0);
const QUOTA_MESSAGE = "Monthly usage limit exceeded. Upgrade your plan.";

afterEach(() => setClock(null));

async function owner(plan: string, ownerEmail: string | null = "owner@example.com"): Promise<QuotaOwner> {
  const team = await setupTeam({ plan, ownerEmail });
  return { teamId: team.teamId, plan, ownerEmail };
}

/** Consumes and reports what happened: the new total, or the error code. */
async function attempt(o: QuotaOwner, service: Service, amount = 1): Promise<number | string> {
  try {
    return await consumeQuota(env, o, service, amount);
  } catch (error) {
    if (error instanceof ApiError) return error.code;
    throw error;
  }
}

async function outbox(teamId: string) {
  const { results } = await env.DB.prepare(
    'SELECT team_id, kind, "to", subject, text, status FROM platform_outbox WHERE team_id = ? ORDER BY created_at, subject',
  )
    .bind(teamId)
    .all<{ team_id: string; kind: string; to: string; subject: string; text: string; status: string }>();
  return results;
}

async function warnings(teamId: string) {
  const { results } = await env.DB.prepare("SELECT service, period, threshold FROM usage_warnings WHERE team_id = ? ORDER BY period, service, threshold")
    .bind(teamId)
    .all<{ service: string; period: string; threshold: number }>();
  return results;
}

describe("monthOf", () => {
  it("gives the UTC calendar month of an instant", () => {
    expect(monthOf(JAN_31_2359)).toEqual({ period: "2032-01", start: "2032-01-01T00:00:00.000Z", end: "2032-01-31T23:59:59.999Z" });
    expect(monthOf(FEB_1_0000).period).toBe("2032-02");
    expect(monthOf(FEB_1_0000 - 1).period).toBe("2032-01");
    expect(monthOf(Date.UTC(2032, 1, 20)).end).toBe("2032-02-29T23:59:59.999Z"); // leap year
    expect(monthOf(Date.UTC(2031, 11, 31, 23, 59, 59, 999)).period).toBe("2031-12");
  });
});

describe("consumeQuota", () => {
  it("is atomic up to the limit: free ai (10) takes 10 units, the 11th throws monthly_quota", async () => {
    setClock(MID_MARCH);
    expect(planTable().free.monthly.ai).toBe(10);
    const o = await owner("free");
    for (let i = 1; i <= 10; i++) expect(await consumeQuota(env, o, "ai")).toBe(i);
    const error = await consumeQuota(env, o, "ai").then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.code).toBe("monthly_quota");
    expect(apiError.status).toBe(429);
    expect(apiError.message).toBe(QUOTA_MESSAGE);
    // Rendered as 429 {error} with no retry_after and no retry-after header.
    expect(renderError(apiError, undefined, "req-1")).toEqual({ error: QUOTA_MESSAGE });
    expect(apiError.headers?.["retry-after"]).toBeUndefined();
    // Nothing was consumed by the refusal.
    expect(await usedOf(o.teamId, "ai", "2032-03")).toBe(10);
  });

  it("refuses an amount that would pass the limit and consumes nothing", async () => {
    setClock(MID_MARCH);
    const o = await owner("free");
    expect(await attempt(o, "ai", 11)).toBe("monthly_quota");
    expect(await usedOf(o.teamId, "ai", "2032-03")).toBeNull();
    expect(await attempt(o, "ai", 7)).toBe(7);
    expect(await attempt(o, "ai", 4)).toBe("monthly_quota");
    expect(await attempt(o, "ai", 3)).toBe(10);
    expect(await usedOf(o.teamId, "ai", "2032-03")).toBe(10);
  });

  it("under concurrency exactly the limit succeeds (15 concurrent consumes, limit 10)", async () => {
    setClock(MID_MARCH);
    const o = await owner("free");
    const results = await Promise.allSettled(Array.from({ length: 15 }, () => consumeQuota(env, o, "ai")));
    const fulfilled = results.filter((r) => r.status === "fulfilled").map((r) => (r as PromiseFulfilledResult<number>).value);
    const rejected = results.filter((r) => r.status === "rejected").map((r) => ((r as PromiseRejectedResult).reason as ApiError).code);
    expect(fulfilled.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(rejected).toEqual(Array(5).fill("monthly_quota"));
    expect(await usedOf(o.teamId, "ai", "2032-03")).toBe(10);
  });

  it("counts per service and per team", async () => {
    setClock(MID_MARCH);
    const a = await owner("free");
    const b = await owner("free");
    for (let i = 0; i < 10; i++) await consumeQuota(env, a, "ai");
    expect(await attempt(a, "ai")).toBe("monthly_quota");
    expect(await attempt(a, "mail")).toBe(1);
    expect(await attempt(b, "ai")).toBe(1);
  });

  it("resets at the month change (Jan 31 23:59 UTC → Feb 1 00:00 UTC)", async () => {
    setClock(JAN_31_2359);
    const o = await owner("free");
    expect(await attempt(o, "ai", 10)).toBe(10);
    expect(await attempt(o, "ai")).toBe("monthly_quota");
    setClock(FEB_1_0000 - 1);
    expect(await attempt(o, "ai")).toBe("monthly_quota");
    setClock(FEB_1_0000);
    expect(await attempt(o, "ai")).toBe(1);
    expect(await usedOf(o.teamId, "ai", "2032-01")).toBe(10);
    expect(await usedOf(o.teamId, "ai", "2032-02")).toBe(1);
  });

  it("follows the plan's limits", async () => {
    setClock(MID_MARCH);
    const o = await owner("starter");
    expect(await attempt(o, "ai", planTable().starter.monthly.ai!)).toBe(100);
    expect(await attempt(o, "ai")).toBe("monthly_quota");
  });

  it("enterprise is unlimited for every service and never warns", async () => {
    setClock(MID_MARCH);
    const o = await owner("enterprise");
    for (const service of services()) {
      expect(planTable().enterprise.monthly[service]).toBeNull();
      expect(await attempt(o, service, 5_000_000)).toBe(5_000_000);
      expect(await attempt(o, service, 5_000_000)).toBe(10_000_000);
    }
    expect(await warnings(o.teamId)).toEqual([]);
    expect(await outbox(o.teamId)).toEqual([]);
  });
});

describe("releaseQuota", () => {
  it("gives units back, never below zero, and a release of 0 does nothing", async () => {
    setClock(MID_MARCH);
    const o = await owner("free");
    await consumeQuota(env, o, "ai", 10);
    await releaseQuota(env, o.teamId, "ai", 3);
    expect(await usedOf(o.teamId, "ai", "2032-03")).toBe(7);
    expect(await attempt(o, "ai", 3)).toBe(10);
    expect(await attempt(o, "ai")).toBe("monthly_quota");
    await releaseQuota(env, o.teamId, "ai", 0);
    expect(await usedOf(o.teamId, "ai", "2032-03")).toBe(10);
    await releaseQuota(env, o.teamId, "ai", 50);
    expect(await usedOf(o.teamId, "ai", "2032-03")).toBe(0);
    // Releasing a service never consumed creates nothing.
    await releaseQuota(env, o.teamId, "push", 5);
    expect(await usedOf(o.teamId, "push", "2032-03")).toBeNull();
  });

  it("releases in the current month only", async () => {
    setClock(JAN_31_2359);
    const o = await owner("free");
    await consumeQuota(env, o, "ai", 5);
    setClock(FEB_1_0000);
    await releaseQuota(env, o.teamId, "ai", 5);
    expect(await usedOf(o.teamId, "ai", "2032-01")).toBe(5);
  });
});

describe("usage warnings", () => {
  it("crossing 80 % queues one email to the owner; 95 % one more; no duplicates after", async () => {
    setClock(MID_MARCH);
    const o = await owner("free", "boss@example.com");
    for (let i = 1; i <= 7; i++) await consumeQuota(env, o, "ai");
    expect(await outbox(o.teamId)).toEqual([]);
    expect(await warnings(o.teamId)).toEqual([]);

    await consumeQuota(env, o, "ai"); // 8 of 10: 80 %
    const first = await outbox(o.teamId);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ team_id: o.teamId, kind: "usage_warning", to: "boss@example.com", status: "pending" });
    expect(first[0].subject).toContain("80%");
    expect(await warnings(o.teamId)).toEqual([{ service: "ai", period: "2032-03", threshold: 80 }]);

    await consumeQuota(env, o, "ai"); // 9 of 10: 90 %, no new threshold
    expect(await outbox(o.teamId)).toHaveLength(1);

    await consumeQuota(env, o, "ai"); // 10 of 10: 100 %, passes 95 %
    const second = await outbox(o.teamId);
    expect(second).toHaveLength(2);
    expect(second.filter((m) => m.subject.includes("95%"))).toHaveLength(1);
    expect(second.every((m) => m.to === "boss@example.com" && m.kind === "usage_warning")).toBe(true);
    expect(await warnings(o.teamId)).toEqual([
      { service: "ai", period: "2032-03", threshold: 80 },
      { service: "ai", period: "2032-03", threshold: 95 },
    ]);

    // Refused consumes, and consumes after a release, warn no more.
    expect(await attempt(o, "ai")).toBe("monthly_quota");
    await releaseQuota(env, o.teamId, "ai", 5);
    for (let i = 0; i < 5; i++) await consumeQuota(env, o, "ai");
    expect(await outbox(o.teamId)).toHaveLength(2);
    expect(await warnings(o.teamId)).toHaveLength(2);
  });

  it("one consume jumping over both marks queues both warnings", async () => {
    setClock(MID_MARCH);
    const o = await owner("free");
    await consumeQuota(env, o, "ai", 10);
    const mails = await outbox(o.teamId);
    expect(mails).toHaveLength(2);
    expect(mails.map((m) => (m.subject.includes("95%") ? 95 : m.subject.includes("80%") ? 80 : 0)).sort()).toEqual([80, 95]);
  });

  it("warns per service: mail crossing 80 % warns even after ai did", async () => {
    setClock(MID_MARCH);
    const o = await owner("free");
    await consumeQuota(env, o, "ai", 8);
    await consumeQuota(env, o, "mail", 2_400); // 80 % of 3,000
    expect(await warnings(o.teamId)).toEqual([
      { service: "ai", period: "2032-03", threshold: 80 },
      { service: "mail", period: "2032-03", threshold: 80 },
    ]);
    expect(await outbox(o.teamId)).toHaveLength(2);
  });

  it("concurrent consumes crossing the mark still warn once", async () => {
    setClock(MID_MARCH);
    const o = await owner("free");
    await consumeQuota(env, o, "ai", 6);
    await Promise.allSettled(Array.from({ length: 6 }, () => consumeQuota(env, o, "ai")));
    expect(await warnings(o.teamId)).toHaveLength(2);
    expect(await outbox(o.teamId)).toHaveLength(2);
  });

  it("sends nothing when the team has no owner_email", async () => {
    setClock(MID_MARCH);
    const o = await owner("free", null);
    await consumeQuota(env, o, "ai", 10);
    expect(await outbox(o.teamId)).toEqual([]);
  });

  it("warnings consume no quota of any service", async () => {
    setClock(MID_MARCH);
    const o = await owner("free");
    await consumeQuota(env, o, "ai", 10);
    expect(await outbox(o.teamId)).toHaveLength(2);
    for (const service of services().filter((s) => s !== "ai")) expect(await usedOf(o.teamId, service, "2032-03")).toBeNull();
  });

  it("a new month warns again", async () => {
    setClock(JAN_31_2359);
    const o = await owner("free");
    await consumeQuota(env, o, "ai", 8);
    expect(await outbox(o.teamId)).toHaveLength(1);
    setClock(FEB_1_0000);
    await consumeQuota(env, o, "ai", 7);
    expect(await outbox(o.teamId)).toHaveLength(1);
    await consumeQuota(env, o, "ai");
    expect(await outbox(o.teamId)).toHaveLength(2);
    expect(await warnings(o.teamId)).toEqual([
      { service: "ai", period: "2032-01", threshold: 80 },
      { service: "ai", period: "2032-02", threshold: 80 },
    ]);
  });
});
