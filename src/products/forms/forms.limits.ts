// The cap of a public form beside the per-IP `public` bucket (docs: README "Limits"): per team and
// client network (IPv4 address, IPv6 /64), a counter per form of FORM_POSTS_PER_MINUTE posts a
// minute, so one network cannot flood one form (nor, through it, starve the team's other forms),
// and a daily counter of the team's posts from that network of at most 1/62 of the plan's monthly
// `submissions` (none for enterprise), so one network can spend at most half of a month's units
// even over 31 days. Both counters live in the team's meter object and are counted in the same
// call that takes the post's unit (one binding call for caps and quota, as analytics does).
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { ApiError } from "../../platform/errors";
import { backgroundOrDetached } from "../../platform/request-context";
import { planLimits } from "../../platform/plans";
import { releaseQuota, takeUnderCaps } from "../../platform/quota";
import type { CounterSpec } from "../../platform/rate-limit/buckets";
import { clientIp, clientNetwork } from "../../platform/rate-limit/middleware";

export const FORM_POSTS_PER_MINUTE = 10;
const DAY_SECONDS = 86_400;

/** Posts a team may take from one client network per UTC day; null when unlimited. */
export function networkDailyCap(plan: string): number | null {
  const monthly = planLimits(plan).monthly.forms;
  return monthly === null ? null : Math.max(FORM_POSTS_PER_MINUTE, Math.floor(monthly / 62));
}

/**
 * Admits a post before its body is read: the form's caps for the client network and the post's
 * `submissions` unit in one call to the team's meter (`takeUnderCaps`); throws the 429 past a cap
 * or the quota, 503 when the meter cannot be reached. Answers how to give the unit back, for a post
 * refused after this (its body, its fields) or kept as spam: either way it costs the team nothing.
 */
export async function admitPost(
  c: Context<AppEnv>,
  form: { id: string; teamId: string; plan: string; ownerEmail: string | null },
): Promise<() => Promise<void>> {
  const network = clientNetwork(clientIp(c));
  const caps: CounterSpec[] = [{ name: `form:${form.id}:net:${network}`, limit: FORM_POSTS_PER_MINUTE }];
  const daily = networkDailyCap(form.plan);
  if (daily !== null) caps.push({ name: `form-day:net:${network}`, limit: daily, windowSeconds: DAY_SECONDS });
  const background = backgroundOrDetached(c);
  await takeUnderCaps(
    c.env,
    { teamId: form.teamId, plan: form.plan, ownerEmail: form.ownerEmail },
    "forms",
    caps,
    background,
    () => new ApiError("unavailable", "The submission could not be counted; try again"),
  );
  return () => releaseQuota(c.env, form.teamId, "forms", 1).catch(() => undefined);
}
