// Receiving a webhook at a source's ingest address: the source look-up (D1, cached per isolate),
// the signature, the quota units in the team's meter, the event with its deliveries in one call to
// the source's store (store/relay-store.ts), the queue, and the first delivery attempt in the
// background of the request. No Hono context here.
import { log } from "../../platform/log";
import { and, asc, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { teams, webhookDestinations, webhookSources } from "../../db/schema";
import { nowIso, nowMs, nowSeconds } from "../../platform/clock";
import { settings } from "../../platform/config";
import { decryptSecret } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { accept, type Background } from "../../platform/jobs/accept";
import { IsolateCache } from "../../platform/isolate-cache";
import { orNotFound } from "../../platform/tenancy";
import { ATTEMPT_COLUMNS, attemptFirst, FIRST_ATTEMPT, type AttemptDestination } from "./relay.consumer";
import { eventIdentity, filterAdmits, signedIdentity, storedHeaders, verifySignature } from "./relay.inbound";
import type { Provider } from "./relay.schemas";
import { RelayErrors } from "./relay.service";
import { ingestEvent, relayStore } from "./relay.store";

type SourceRow = typeof webhookSources.$inferSelect;

export interface InboundWebhook {
  headers: Headers;
  body: string;
  contentType: string | null;
}

export interface IngestResult {
  id: string;
  event_type: string | null;
  duplicate: boolean;
  deliveries: number;
}

/** A source found by its slug, with its team's plan and owner and its enabled destinations. */
export interface IngestSource {
  source: SourceRow;
  /** The provider's signing secret, decrypted; null when the source verifies no signature. */
  secret: string | null;
  plan: string;
  ownerEmail: string | null;
  /** Its enabled destinations, with their secrets opened: the first attempts need no read of their own. */
  destinations: Array<AttemptDestination & { eventFilter: string[] }>;
}

/** How long an isolate serves a source it read: the bound for a change made on another isolate to apply at ingest. */
export const SOURCE_CACHE_TTL_MS = 10_000;
/** Sources kept per isolate; the oldest goes first. */
export const SOURCE_CACHE_MAX = 2_000;

/**
 * The sources this isolate received events for, by slug: a provider sending a stream of events
 * costs one D1 read and one decryption per SOURCE_CACHE_TTL_MS instead of one per event. Changes
 * made through this isolate (source or destination edited or deleted, team plan changed) drop the
 * entry at once (forgetIngestSource, forgetTeamEverywhere); other isolates see them within the TTL.
 * A destination disabled elsewhere in that time still gets delivery rows, which its consumer fails
 * as "destination disabled" without sending.
 */
const ingestSources = new IsolateCache<IngestSource>({ ttlMs: SOURCE_CACHE_TTL_MS, max: SOURCE_CACHE_MAX, teamOf: (found) => found.source.teamId });

/** A source or its destinations changed on this isolate: the next event re-reads them. */
export function forgetIngestSource(sourceId: string): void {
  ingestSources.forget((found) => found.source.id === sourceId);
}

/** The source of an ingest address, from this isolate's cache or D1; 404 when unknown. */
export async function loadIngestSource(env: Env, slug: string): Promise<IngestSource> {
  return orNotFound(await ingestSources.getOrLoad(slug, () => readIngestSource(env, slug)), RelayErrors.source);
}

/** The source of an ingest address and its enabled destinations, in one round trip; null when unknown. */
async function readIngestSource(env: Env, slug: string): Promise<IngestSource | null> {
  const db = getDb(env.DB);
  const [sources, destinations] = await db.batch([
    db
      .select({ source: webhookSources, plan: teams.plan, ownerEmail: teams.ownerEmail })
      .from(webhookSources)
      .innerJoin(teams, eq(teams.id, webhookSources.teamId))
      .where(eq(webhookSources.slug, slug))
      .limit(1),
    db
      .select({ ...ATTEMPT_COLUMNS, eventFilter: webhookDestinations.eventFilter })
      .from(webhookDestinations)
      .innerJoin(webhookSources, eq(webhookSources.id, webhookDestinations.sourceId))
      .where(and(eq(webhookSources.slug, slug), eq(webhookDestinations.enabled, true)))
      .orderBy(asc(webhookDestinations.createdAt), asc(webhookDestinations.id)),
  ]);
  const found = sources[0];
  if (!found) return null;
  const sealed = found.source.signingSecret;
  const open = (value: string) => decryptSecret(env.ENCRYPTION_KEY, value, env.ENCRYPTION_KEY_PREVIOUS);
  const [secret, ...opened] = await Promise.all([sealed ? open(sealed) : null, ...destinations.map((d) => open(d.secret))]);
  return {
    ...found,
    secret,
    destinations: destinations.map((d, i) => ({ ...d, secret: opened[i]!, cached: true, ownerEmail: found.ownerEmail })),
  };
}

/**
 * Receives one webhook at a source (found by loadIngestSource): signature, then its quota units in
 * the team's meter (beside the per-IP bucket's count, `admitted`: the refusal it answered, or
 * null), then the event and its deliveries in one call to the source's store, which claims each
 * delivery for its first attempt as it stores it, then those first attempts in the background
 * (`background.waitUntil`) with the destinations this isolate holds, so a healthy destination gets
 * the event at once, with no queue message, claim call or D1 read per event. The store is the
 * deliveries' outbox: a delivery left for a retry is queued by its attempt, and one whose attempt
 * never reported (the isolate died) is queued by the store's alarm once its lease has ended. When
 * the store fails, nothing is stored (its call is one transaction) and the units are given back (503).
 */
export async function receiveWebhook(
  env: Env,
  found: IngestSource,
  inbound: InboundWebhook,
  background: Background,
  admitted: Promise<unknown> = Promise.resolve(null),
): Promise<IngestResult> {
  const { source, plan, ownerEmail } = found;
  // Everything up to the store runs beside the per-IP bucket's count (`admitted`): whatever this
  // request is refused for, or answered with, a rate-limit refusal comes first, as if the bucket
  // had been asked before anything else (units taken meanwhile are given back by the step).
  let identity: Identity;
  try {
    identity = await verify(found, inbound);
  } catch (error) {
    throw (await admitted) ?? error;
  }
  const sizeBytes = new TextEncoder().encode(inbound.body).byteLength;
  const units = eventUnits(sizeBytes);
  const event = {
    id: crypto.randomUUID(),
    eventType: identity.type,
    providerEventId: identity.providerEventId,
    contentType: inbound.contentType,
    headers: storedHeaders(inbound.headers),
    body: inbound.body,
    sizeBytes,
    receivedAt: nowIso(),
  };
  const deliveries = found.destinations
    .filter((d) => filterAdmits(d.eventFilter, identity.type))
    .map((destination) => ({ id: crypto.randomUUID(), destination }));
  const unavailable = () => new ApiError("unavailable", "Event could not be stored; retry later");

  // The platform's accept step (platform/jobs/accept.ts): the units, then the event and its
  // deliveries in one store call (one transaction: a copy of a stored provider event id writes
  // nothing and names the stored one), each delivery claimed there for the first attempt made
  // from this request's background. Nothing is queued: the store is the deliveries' outbox.
  const { duplicate } = await accept<{ duplicate: { id: string; eventType: string | null } | null }>({
    name: "relay ingest",
    env,
    quota: {
      owner: { teamId: source.teamId, plan, ownerEmail },
      service: "webhooks",
      units,
      refused: async (error) => {
        const refusal = await admitted;
        if (refusal) throw refusal;
        if (!(error instanceof ApiError)) {
          // The meter cannot be reached: nothing is stored without its units (quotas fail closed).
          log.error("relay: usage meter unavailable", { team_id: source.teamId, error: String(error) });
          throw unavailable();
        }
        // Over the quota, a copy of a stored event still answers 202 duplicate (it costs nothing).
        const stored = identity.providerEventId ? await findDuplicate(env, source.id, identity.providerEventId) : null;
        if (stored) return { duplicate: stored };
        throw error;
      },
    },
    store: async () => {
      const refusal = await admitted;
      if (refusal) throw refusal;
      const answer = await ingestEvent(
        env,
        {
          sourceId: source.id,
          retentionDays: source.retentionDays,
          event: { ...event, headers: JSON.stringify(event.headers) },
          deliveries: deliveries.map((d) => ({ id: d.id, destinationId: d.destination.id })),
          claim: { now: nowMs(), leaseMs: FIRST_ATTEMPT.leaseMs },
          forwardsPerMinute: settings(env).relayForwardsPerMinute,
        },
        (promise) => background.waitUntil(promise),
      );
      // The source's forward cap (a loop through a third party that drops our headers): nothing
      // stored, the units given back, the sender told when to retry.
      if ("capped" in answer) throw ApiError.rateLimited(answer.capped.retryAfter);
      return answer;
    },
    // A copy of a provider event already stored: the first one is kept, its units are not taken.
    unused: (stored) => (stored.duplicate ? units : 0),
    unavailable,
    attempt: async (stored) => {
      if (!stored.duplicate && deliveries.length > 0) await attemptFirst(env, source.id, event, deliveries);
    },
    background,
  });
  if (duplicate) return { id: duplicate.id, event_type: duplicate.eventType, duplicate: true, deliveries: 0 };
  return { id: event.id, event_type: identity.type, duplicate: false, deliveries: deliveries.length };
}

type Identity = Awaited<ReturnType<typeof signedIdentity>> | ReturnType<typeof eventIdentity>;

/** The checks of an event before its units: source enabled, signature, then what names the event. */
async function verify(found: IngestSource, inbound: InboundWebhook): Promise<Identity> {
  const { source, secret } = found;
  if (!source.enabled) throw new ApiError("source_disabled", "Source is disabled");
  const provider = source.provider as Provider;
  if (secret !== null) {
    const valid = await verifySignature(provider, secret, { headers: inbound.headers, body: inbound.body }, nowSeconds());
    if (!valid) throw new ApiError("unauthorized", "Invalid webhook signature");
  }
  // Signed: only what the signature covers names the event (one signed body is accepted once).
  return secret !== null
    ? await signedIdentity(provider, inbound.headers, inbound.body, inbound.contentType)
    : eventIdentity(provider, inbound.headers, inbound.body, inbound.contentType);
}

/** The stored event of a provider event id (a refused event may still be a copy of one); null when none, or when the store cannot say. */
async function findDuplicate(env: Env, sourceId: string, providerEventId: string) {
  return relayStore(env, sourceId)
    .findDuplicate(providerEventId)
    .catch(() => null);
}

/** Bytes of a stored event that one `webhooks` unit pays for. */
export const EVENT_UNIT_BYTES = 64 * 1024;

/**
 * Units of the `webhooks` quota an event of `sizeBytes` consumes: one per started 64 KB, so storage
 * is metered with the events (a 1 MB event costs 16 units: a free team's 10,000 units store at most
 * ~625 MB a month instead of ~10 GB).
 */
export function eventUnits(sizeBytes: number): number {
  return Math.max(1, Math.ceil(sizeBytes / EVENT_UNIT_BYTES));
}
