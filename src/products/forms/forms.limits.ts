// The caps of a public form beside the per-IP `public` bucket (docs: README "Limits"): per client
// network (IPv4 address, IPv6 /64), a counter per form of FORM_POSTS_PER_MINUTE posts a minute, so
// one network cannot flood one form (nor, through it, starve the team's other forms), and a daily
// counter of the team's posts from that network of at most 1/62 of the plan's monthly
// `submissions` (none for enterprise), so one network can spend at most half of a month's units
// even over 31 days. Both are counters of the network, counted after its `public` bucket in the
// same call to its block's object (NetworkCap); the post's unit is taken beside that call
// (spendBeside: in the team's meter under a limit, in the isolate's batch when unlimited).
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { ApiError } from "../../platform/errors";
import { backgroundOrDetached } from "../../platform/request-context";
import { planLimits } from "../../platform/plans";
import { spendBeside } from "../../platform/quota";
import { DAY_SECONDS } from "../../platform/rate-limit/buckets";
import type { CountNetwork, NetworkCap } from "../../platform/rate-limit/middleware";

export const FORM_POSTS_PER_MINUTE = 10;

/** Posts a team may take from one client network per UTC day; null when unlimited. */
export function networkDailyCap(plan: string): number | null {
  const monthly = planLimits(plan).monthly.forms;
  return monthly === null ? null : Math.max(FORM_POSTS_PER_MINUTE, Math.floor(monthly / 62));
}

/**
 * Admits a post before its body is read: the `public` bucket and the form's caps for the client
 * network in one call, the post's `submissions` unit beside it; throws the 429 past the bucket, a
 * cap or the quota, 503 when the meter cannot be reached. Answers how to give the unit back, for a
 * post refused after this (its body, its fields) or kept as spam: either way it costs the team nothing.
 * `count` counts the request in the `public` bucket (the route's, bound to its client network).
 */
export async function admitPost(
  c: Context<AppEnv>,
  form: { id: string; teamId: string; plan: string; ownerEmail: string | null },
  count: CountNetwork,
): Promise<() => Promise<void>> {
  const caps: NetworkCap[] = [{ name: `form:${form.id}`, limit: FORM_POSTS_PER_MINUTE }];
  const daily = networkDailyCap(form.plan);
  if (daily !== null) caps.push({ name: `forms:${form.teamId}`, limit: daily, windowSeconds: DAY_SECONDS });
  return spendBeside(
    c.env,
    { teamId: form.teamId, plan: form.plan, ownerEmail: form.ownerEmail },
    "forms",
    count(caps),
    backgroundOrDetached(c),
    () => new ApiError("unavailable", "The submission could not be counted; try again"),
  );
}
