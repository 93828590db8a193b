// Counting one event of POST /api/event: the body (analytics-event.ts), the site (cached per
// isolate), the drops (a known bot, a URL off the site's domain: 202, not counted), then the
// per-IP `public` bucket and the per-site caps of the client network in one call to its block's
// object with the `events` unit beside it (spendBeside), the visitor hash
// (salted per UTC day, computed here from the address and user agent, which go no further), and
// the event handed to the isolate's batch for the site's store. No Hono context here.
import { isbot } from "isbot";
import type { Env } from "../../env";
import { nowMs } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { planLimits } from "../../platform/plans";
import { spendBeside } from "../../platform/quota";
import type { Background } from "../../platform/jobs/accept";
import { DAY_SECONDS } from "../../platform/rate-limit/buckets";
import type { CountNetwork, NetworkCap } from "../../platform/rate-limit/middleware";
import { onSiteDomain, pageOf, parseEvent } from "./analytics-event";
import { findIngestSite, type IngestSite } from "./analytics-sites.service";
import { dailySalt, eventBatch } from "./analytics.store";
import { resolveSource } from "./analytics.sources";

/** What the request tells about its sender; none of it is stored. */
export interface Sender {
  ip: string;
  userAgent: string;
  /** `request.cf.country`, null where absent (`wrangler dev`). */
  country: string | null;
}

/** Why an event was answered 202 without being counted (the `x-analytics-dropped` header), or null when counted. */
export type Dropped = "bot" | "foreign_host" | "engagement" | null;

/** Events of one site from one client network per 60 s window. */
export const NETWORK_MINUTE_CAP = 120;
/** Share of the site team's monthly `events` limit one client network may spend per UTC day (1/50: a month of days stays under two thirds). */
export const NETWORK_DAY_SHARE = 50;
/** A network's daily cap where the plan has no monthly limit. */
export const NETWORK_DAY_UNLIMITED = 100_000;

/** A network's daily cap of events for a site of a team on `plan`. */
export function networkDayCap(plan: string): number {
  const monthly = planLimits(plan).monthly.analytics;
  return monthly === null ? NETWORK_DAY_UNLIMITED : Math.max(100, Math.floor(monthly / NETWORK_DAY_SHARE));
}

/**
 * Receives one event. Throws 400 (malformed), 404 (unknown site) or 429 (a cap, or the monthly
 * quota); answers why it was not counted, or null once it is counted and handed to the batch.
 * `count` counts the request in the per-IP `public` bucket, once: with the site's caps for the
 * network when the event counts, alone otherwise; its refusal comes first.
 */
export async function receiveEvent(env: Env, text: string, sender: Sender, background: Background, count: CountNetwork): Promise<Dropped> {
  let input: ReturnType<typeof parseEvent>;
  let found: IngestSite | null;
  try {
    input = parseEvent(text);
    found = await findIngestSite(env, input.domain);
  } catch (error) {
    throw (await count()) ?? error;
  }
  if (!found) throw (await count()) ?? ApiError.notFound("Site not found");
  const { site } = found;
  const dropped = droppedWhy(input, site, sender);
  if (dropped) {
    const refusal = await count();
    if (refusal) throw refusal;
    return dropped;
  }

  const at = nowMs();
  const day = new Date(at).toISOString().slice(0, 10);
  // The unit (beside the count of the bucket and caps: one round trip, the unit given back when
  // they refuse) and the hash are independent: all at once (none left unawaited should another fail).
  const [, visitor] = await Promise.all([
    spendUnit(env, found, count, background),
    dailySalt(env, day).then((salt) => visitorHash(salt, site.id, sender.ip, sender.userAgent)),
  ]);
  const country = sender.country && /^[A-Z]{2}$/.test(sender.country) && sender.country !== "XX" && sender.country !== "T1" ? sender.country : "";
  eventBatch(env).add({
    siteId: site.id,
    event: {
      ts: at,
      name: input.name,
      page: pageOf(input.url, site.keepQueryString),
      visitor,
      source: resolveSource(input.url, input.referrer),
      country,
      props: input.props ? JSON.stringify(input.props) : null,
    },
  });
  const drain = eventBatch(env).drain();
  if (drain) background.waitUntil(drain);
  return null;
}

/** Why an event of a found site is accepted but not counted, or null when it counts. */
function droppedWhy(input: ReturnType<typeof parseEvent>, site: IngestSite["site"], sender: Sender): Dropped {
  // Plausible drops bots and a missing user agent; an event off the site's domain is someone else's page.
  if (sender.userAgent === "" || isbot(sender.userAgent)) return "bot";
  if (!onSiteDomain(input.url, site.domain)) return "foreign_host";
  // Plausible's tracker reports scroll depth and time on page as `engagement` events; Plausible
  // counts them as neither pageviews nor events (we keep no engagement metrics): accepted, not counted.
  if (input.name === "engagement") return "engagement";
  return null;
}

/**
 * The per-site caps of the client network, counted after its `public` bucket in one call to the
 * block's object (a minute's and a UTC day's), and beside it the event's unit, the month's `events`
 * (spendBeside). The meter unreachable refuses the event of a limited plan (quotas fail closed): 503.
 */
async function spendUnit(env: Env, found: IngestSite, count: CountNetwork, background: Background): Promise<void> {
  const { site, plan, ownerEmail } = found;
  const caps: NetworkCap[] = [
    { name: `analytics:${site.id}`, limit: NETWORK_MINUTE_CAP },
    { name: `analytics:${site.id}`, limit: networkDayCap(plan), windowSeconds: DAY_SECONDS },
  ];
  await spendBeside(
    env,
    { teamId: site.teamId, plan, ownerEmail },
    "analytics",
    count(caps),
    background,
    () => new ApiError("unavailable", "Event could not be counted; retry later"),
  );
}

/** hash(daily salt, site id, ip, user agent): the first 8 bytes of a SHA-256, as 16 hex characters. */
export async function visitorHash(salt: string, siteId: string, ip: string, userAgent: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${salt}\u0000${siteId}\u0000${ip}\u0000${userAgent}`));
  return [...new Uint8Array(digest, 0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
