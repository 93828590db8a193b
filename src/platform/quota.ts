// Monthly plan quotas: one counter per team, service and UTC calendar month, kept by the team's
// meter (the team's rate-limit Durable Object, rate-limit/durable-object.ts) and taken there in one
// step, so two concurrent requests can never both take the last unit; D1 holds the meter's
// periodic roll-up, not a write per request. Crossing 80 % or 95 % of a limit queues one warning
// email to the team owner per threshold, service and month; warnings consume no quota.
import type { Env } from "../env";
import { getDb } from "../db/client";
import { usageWarnings } from "../db/schema";
import { nowMs } from "./clock";
import { ApiError } from "./errors";
import { planLimits, serviceMetric, type Service } from "./plans";
import { queuePlatformMail, type MailContent } from "./platform-mail";
import type { Background } from "./jobs/commit";
import { log } from "./log";
import { getMeter, meterOf } from "./rate-limit/limiter";
import { teamObject } from "./rate-limit/buckets";
import { besideCount, type Admission } from "./rate-limit/middleware";
import { batchPer } from "./isolate-batch";

export interface QuotaOwner {
  teamId: string;
  plan: string;
  ownerEmail: string | null;
}

export const WARNING_THRESHOLDS = [80, 95] as const;

/** A UTC calendar month: key `YYYY-MM` and its bounds as ISO instants. */
export type Month = Readonly<{ period: string; start: string; end: string }>;
/** The month monthOf answered last, with its bounds in ms. */
let lastMonth: { from: number; until: number; month: Month } | null = null;

/** The UTC calendar month of an instant: key `YYYY-MM` and its bounds. */
export function monthOf(ms: number): Month {
  // Every metered request asks; the answer changes once a month.
  if (lastMonth && ms >= lastMonth.from && ms < lastMonth.until) return lastMonth.month;
  const d = new Date(ms);
  const start = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  const next = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  const month: Month = Object.freeze({
    period: start.toISOString().slice(0, 7),
    start: start.toISOString(),
    end: new Date(next.getTime() - 1).toISOString(),
  });
  lastMonth = { from: start.getTime(), until: next.getTime(), month };
  return month;
}

/**
 * Consumes `amount` units of a service for the current month in the team's meter (checked and
 * taken in one step, so two concurrent requests can never both take the last unit); throws the 429
 * monthly-quota error (nothing consumed) when that would pass the plan's limit. Fails closed: when
 * the meter cannot be reached or cannot load the month, the error propagates and nothing is taken.
 * Returns the new total.
 */
export async function consumeQuota(env: Env, owner: QuotaOwner, service: Service, amount = 1): Promise<number> {
  const limit = planLimits(owner.plan).monthly[service];
  const { at, answer } = await getMeter(env).ask(teamObject(owner.teamId), owner.teamId, { quota: { service, amount, limit } });
  const taken = answer.quota!;
  if (!taken.ok) throw ApiError.monthlyQuota();
  if (limit !== null) await warnOnThresholds(env, owner, service, monthOf(at).period, taken.used - amount, taken.used, limit);
  return taken.used;
}

/** How long the isolate gathers unlimited units before it adds them to the teams' meters. */
export const UNLIMITED_LINGER_MS = 50;

/** Units of a service some team's plan leaves unlimited, waiting to be added to its meter. */
interface UnlimitedUnits {
  teamId: string;
  service: Service;
  amount: number;
}

/** The isolate's batch of unlimited units for an environment's meters. */
const unlimitedUnits = batchPer<Env["RATE_LIMITER"], UnlimitedUnits>((namespace) => {
  const meter = meterOf(namespace);
  return {
    name: "unlimited units",
    batchMax: 10_000,
    pendingMax: 100_000,
    lingerMs: UNLIMITED_LINGER_MS,
    send: async (items) => {
      // One meter call per team and service, whatever the number of requests in the batch.
      const sums = new Map<string, UnlimitedUnits>();
      for (const item of items) {
        const key = `${item.teamId}\u0000${item.service}`;
        const sum = sums.get(key);
        if (sum) sum.amount += item.amount;
        else sums.set(key, { ...item });
      }
      await Promise.all(
        [...sums.values()]
          .filter(({ amount }) => amount !== 0)
          .map(({ teamId, service, amount }) => meter.ask(teamObject(teamId), teamId, { quota: { service, amount, limit: null } })),
      );
    },
  };
});

const unlimitedBatch = (env: Env) => unlimitedUnits(env.RATE_LIMITER);

/**
 * Spends one unit of `service` for work done now: under a limit, taken in the team's meter before
 * the caller goes on (consumeQuota: the monthly-quota 429 when none is left, fail closed). When the
 * team's plan leaves the service unlimited nothing can refuse it, so nothing waits: the unit joins
 * the isolate's batch (`UNLIMITED_LINGER_MS`, one meter call per team and service a batch, written
 * from `background`), and GET /usage shows it that much later. A batch the meter cannot take is
 * logged and dropped: an unlimited plan's usage is a report, never a refusal.
 */
export async function spendUnit(env: Env, owner: QuotaOwner, service: Service, background: Background): Promise<void> {
  if (planLimits(owner.plan).monthly[service] !== null) await consumeQuota(env, owner, service);
  else countUnlimited(env, owner.teamId, service, background);
}

/** Adds one unit (or gives one back: -1) of a service the team's plan leaves unlimited to the isolate's batch (spendUnit). */
function countUnlimited(env: Env, teamId: string, service: Service, background: Background, amount: 1 | -1 = 1): void {
  const batch = unlimitedBatch(env);
  batch.add({ teamId, service, amount });
  const drained = batch.drain();
  if (drained) background.waitUntil(drained);
}

/** Waits until every unlimited unit this isolate holds is in its team's meter (tests, the bench). */
export function unlimitedUnitsSettled(env: Env): Promise<void> {
  return unlimitedBatch(env).settled();
}

/**
 * A public route's unit, beside the count of its per-IP bucket and caps (`admitted`, countBeside):
 * under a limit it is taken in the team's meter while the count runs (one round trip for both),
 * given back when the count refuses, the monthly-quota 429 when none is left, `unavailable()` when
 * the meter cannot answer (quotas fail closed); an unlimited plan's unit joins the isolate's batch
 * once the count admitted the request (no meter call on the request's path). Answers how to give
 * the unit back, for a request refused after this (its body, a spam check).
 */
export async function spendBeside(
  env: Env,
  owner: QuotaOwner,
  service: Service,
  admitted: Admission,
  background: Background,
  unavailable: () => ApiError,
): Promise<() => Promise<void>> {
  if (planLimits(owner.plan).monthly[service] === null) {
    const refusal = await admitted;
    if (refusal) throw refusal;
    countUnlimited(env, owner.teamId, service, background);
    return async () => countUnlimited(env, owner.teamId, service, background, -1);
  }
  const giveBack = () => releaseQuota(env, owner.teamId, service, 1).catch(() => undefined);
  const taken = consumeQuota(env, owner, service).catch((error: unknown) => {
    if (error instanceof ApiError) throw error;
    log.error(`${service}: usage meter unavailable`, { team_id: owner.teamId, error: String(error) });
    throw unavailable();
  });
  await besideCount(admitted, taken, giveBack);
  return giveBack;
}

/** A unit taken before the route knows whether it will do the work (takeUnitAhead). */
export interface UnitAhead {
  /** The route did the work: the unit stays spent (the monthly-quota 429 when none was left). */
  spend(): void;
  /** The route did not (a 304, a refusal): the unit goes back; nothing once spent. */
  unspent(): void;
}

/**
 * Takes one unit of `service` ahead, beside a request's other calls, for a route that decides only
 * later whether it does the work (a 304 answers without any): never refuses here; `spend()` throws
 * the monthly-quota 429 when none was left, `unspent()` gives a taken unit back, both in
 * `background` (the threshold warnings, the give-back). Fails closed like consumeQuota when the
 * meter cannot answer. A service the plan leaves unlimited takes nothing ahead and makes no call: a
 * spent unit joins the isolate's batch (spendUnit).
 */
export async function takeUnitAhead(env: Env, owner: QuotaOwner, service: Service, background: Background): Promise<UnitAhead> {
  const limit = planLimits(owner.plan).monthly[service];
  if (limit === null) {
    // Nothing to refuse: no call now; a spent unit joins the isolate's batch (spendUnit).
    let spent = false;
    return {
      spend() {
        if (spent) return;
        spent = true;
        countUnlimited(env, owner.teamId, service, background);
      },
      unspent() {
        spent = true;
      },
    };
  }
  const { at, answer } = await getMeter(env).ask(teamObject(owner.teamId), owner.teamId, { quota: { service, amount: 1, limit } });
  const taken = answer.quota!;
  let settled = !taken.ok;
  return {
    spend() {
      if (!taken.ok) throw ApiError.monthlyQuota();
      if (settled) return;
      settled = true;
      if (limit !== null)
        background.waitUntil(warnOnThresholds(env, owner, service, monthOf(at).period, taken.used - 1, taken.used, limit).catch(() => undefined));
    },
    unspent() {
      if (settled) return;
      settled = true;
      background.waitUntil(releaseQuota(env, owner.teamId, service, 1).catch(() => undefined));
    },
  };
}

/**
 * Throws the 429 monthly-quota error when the team has no unit of `service` left this month;
 * consumes nothing. For work whose unit is spent later (a survey response, when it completes: see
 * spendQuota). Fails closed like consumeQuota when the meter cannot answer.
 */
export async function requireQuotaLeft(env: Env, owner: { teamId: string; plan: string }, service: Service): Promise<void> {
  const limit = planLimits(owner.plan).monthly[service];
  if (limit === null) return;
  const { answer } = await getMeter(env).ask(teamObject(owner.teamId), owner.teamId, { quota: { service, amount: 0, limit } });
  if (answer.quota!.used >= limit) throw ApiError.monthlyQuota();
}

/**
 * Spends `amount` units of work already done (a completed survey response): never refused, so the
 * total may pass the limit by the work that was in flight; warns at the thresholds as consumeQuota
 * does. Returns the new total.
 */
export async function spendQuota(env: Env, owner: QuotaOwner, service: Service, amount = 1): Promise<number> {
  const { at, answer } = await getMeter(env).ask(teamObject(owner.teamId), owner.teamId, { quota: { service, amount, limit: null } });
  const used = answer.quota!.used;
  const limit = planLimits(owner.plan).monthly[service];
  if (limit !== null) await warnOnThresholds(env, owner, service, monthOf(at).period, used - amount, used, limit);
  return used;
}

/** Gives back units consumed for work that was then refused (e.g. a batch item that failed); never below zero. */
export async function releaseQuota(env: Env, teamId: string, service: Service, amount: number): Promise<void> {
  if (amount <= 0) return;
  await getMeter(env).ask(teamObject(teamId), teamId, { quota: { service, amount: -amount, limit: null } });
}

/** The usage warning's mail (no tenant text: every value is the platform's own). */
export function usageWarningMail(input: { threshold: number; service: Service; period: string; after: number; limit: number }): MailContent {
  const { threshold, service, period, after, limit } = input;
  return {
    subject: `You have used ${threshold}% of your monthly ${service} quota`,
    text:
      `Your team has used ${after} of ${limit} ${serviceMetric(service)} this month (${period}), ` +
      `passing ${threshold}% of the limit of your plan. When the limit is reached, further requests ` +
      `answer 429 until the 1st of next month. Upgrade your plan to raise the limit.`,
  };
}

/**
 * Queues the owner's warning email for each threshold (80 %, 95 %) the usage crossed going from
 * `before` to `after` units, once per threshold, service and month. For callers that take their
 * units in their own D1 batch instead of through consumeQuota.
 */
export async function warnOnThresholds(
  env: Env,
  owner: QuotaOwner,
  service: Service,
  period: string,
  before: number,
  after: number,
  limit: number,
): Promise<void> {
  for (const threshold of WARNING_THRESHOLDS) {
    const mark = (limit * threshold) / 100;
    if (before >= mark || after < mark) continue;
    // The primary key (team, service, period, threshold) makes the warning once-only even when
    // two requests cross the mark at the same time.
    const [inserted] = await getDb(env.DB)
      .insert(usageWarnings)
      .values({ teamId: owner.teamId, service, period, threshold, createdAt: new Date(nowMs()).toISOString() })
      .onConflictDoNothing()
      .returning({ threshold: usageWarnings.threshold });
    if (!inserted || !owner.ownerEmail) continue;
    await queuePlatformMail(env, {
      teamId: owner.teamId,
      kind: "usage_warning",
      to: owner.ownerEmail,
      ...usageWarningMail({ threshold, service, period, after, limit }),
    });
  }
}
