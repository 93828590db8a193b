// The cap of a public form beside the per-IP `public` bucket (docs: README "Limits"): per team and
// client network (IPv4 address, IPv6 /64), a counter per form of FORM_POSTS_PER_MINUTE posts a
// minute, so one network cannot flood one form (nor, through it, starve the team's other forms),
// and a daily counter of the team's posts from that network of at most 1/62 of the plan's monthly
// `submissions` (none for enterprise), so one network can spend at most half of a month's units
// even over 31 days. Both counters live in one limiter object and are counted with one call.
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { ApiError } from "../../platform/errors";
import { planLimits } from "../../platform/plans";
import type { CounterSpec } from "../../platform/rate-limit/buckets";
import { getLimiter } from "../../platform/rate-limit/limiter";
import { clientIp } from "../../platform/rate-limit/middleware";
import { clientNetwork } from "../../platform/rate-limit/middleware";

export const FORM_POSTS_PER_MINUTE = 10;
const DAY_SECONDS = 86_400;

/** Posts a team may take from one client network per UTC day; null when unlimited. */
export function networkDailyCap(plan: string): number | null {
  const monthly = planLimits(plan).monthly.forms;
  return monthly === null ? null : Math.max(FORM_POSTS_PER_MINUTE, Math.floor(monthly / 62));
}

/** Counts a post in its form's and team's counters for the client network; throws the 429 past either. */
export async function enforceFormCap(c: Context<AppEnv>, form: { id: string; teamId: string; plan: string }): Promise<void> {
  const counters: CounterSpec[] = [{ name: `form:${form.id}`, limit: FORM_POSTS_PER_MINUTE }];
  const daily = networkDailyCap(form.plan);
  if (daily !== null) counters.push({ name: "day", limit: daily, windowSeconds: DAY_SECONDS });
  let keepAlive: ((p: Promise<unknown>) => void) | undefined;
  try {
    const ctx = c.executionCtx;
    keepAlive = (p) => ctx.waitUntil(p);
  } catch {
    keepAlive = undefined;
  }
  const results = await getLimiter(c.env).hitAll(`form_net:team:${form.teamId}:net:${clientNetwork(clientIp(c))}`, counters, keepAlive);
  for (const result of results) {
    if (result.allowed) continue;
    c.set("rateLimit", result);
    throw ApiError.rateLimited(result.retryAfter);
  }
}
