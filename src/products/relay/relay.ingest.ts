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
import { decryptSecret } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { consumeQuota, releaseQuota } from "../../platform/quota";
import { IsolateCache } from "../../platform/isolate-cache";
import { orNotFound } from "../../platform/tenancy";
import { attemptFirst, FIRST_ATTEMPT, type AttemptDestination } from "./relay.consumer";
import { eventIdentity, filterAdmits, signedIdentity, storedHeaders, verifySignature } from "./relay.inbound";
import type { Provider } from "./relay.schemas";
import { RelayErrors, type Background } from "./relay.service";
import { relayStore, type RelayStoreStub } from "./relay.store";

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
  return orNotFound(await ingestSources.getOrLoad(slug, () => readIngestSource(env, slug)), RelayErrors.source());
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
      .select({
        id: webhookDestinations.id,
        teamId: webhookDestinations.teamId,
        url: webhookDestinations.url,
        secret: webhookDestinations.secret,
        enabled: webhookDestinations.enabled,
        failingSince: webhookDestinations.failingSince,
        eventFilter: webhookDestinations.eventFilter,
      })
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
    destinations: destinations.map((d, i) => ({ ...d, secret: opened[i]!, opened: true, cached: true, ownerEmail: found.ownerEmail })),
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
  const { source } = found;
  // Everything up to the units runs beside the per-IP bucket's count (`admitted`): whatever this
  // request is refused for, or answered with, a rate-limit refusal comes first, as if the bucket
  // had been asked before anything else.
  let taken: Taken;
  try {
    taken = await verifyAndTake(env, found, inbound);
  } catch (error) {
    throw (await admitted) ?? error;
  }
  const refused = await admitted;
  if (refused) {
    if (!("duplicate" in taken)) await giveBack(env, source.teamId, taken.units);
    throw refused;
  }
  if ("duplicate" in taken) return taken;
  const { identity, sizeBytes, units } = taken;
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

  // Event and deliveries in one store call (one transaction: a copy of a stored provider event id
  // writes nothing and names the stored one), each delivery claimed for the attempt below.
  let stored: Awaited<ReturnType<RelayStoreStub["ingest"]>>;
  try {
    stored = await relayStore(env, source.id).ingest({
      sourceId: source.id,
      retentionDays: source.retentionDays,
      event: { ...event, headers: JSON.stringify(event.headers) },
      deliveries: deliveries.map((d) => ({ id: d.id, destinationId: d.destination.id })),
      claim: { now: nowMs(), leaseMs: FIRST_ATTEMPT.leaseMs },
    });
  } catch (error) {
    await giveBack(env, source.teamId, units);
    log.error("relay: store unavailable", { source_id: source.id, error: String(error) });
    throw new ApiError("unavailable", "Event could not be stored; retry later");
  }
  const { duplicate } = stored;
  if (duplicate) {
    // A copy of a provider event already stored: the first one is kept, its units are not taken.
    await giveBack(env, source.teamId, units);
    return { id: duplicate.id, event_type: duplicate.eventType, duplicate: true, deliveries: 0 };
  }
  if (deliveries.length > 0) background.waitUntil(attemptFirst(env, source.id, event, deliveries));
  return { id: event.id, event_type: identity.type, duplicate: false, deliveries: deliveries.length };
}

type Identity = Awaited<ReturnType<typeof signedIdentity>> | ReturnType<typeof eventIdentity>;
/** Units taken for an event, or the answer for a copy of a stored one (no units taken). */
type Taken = { identity: Identity; sizeBytes: number; units: number } | IngestResult;

/**
 * The checks of an event and its units: source enabled, signature, identity, then the units in the
 * team's meter (checked and taken in one step there). A copy of a stored event costs nothing and
 * answers 202 duplicate, even with the quota used up.
 */
async function verifyAndTake(env: Env, found: IngestSource, inbound: InboundWebhook): Promise<Taken> {
  const { source, secret, plan, ownerEmail } = found;
  if (!source.enabled) throw new ApiError("source_disabled", "Source is disabled");
  const provider = source.provider as Provider;
  if (secret !== null) {
    const valid = await verifySignature(provider, secret, { headers: inbound.headers, body: inbound.body }, nowSeconds());
    if (!valid) throw new ApiError("unauthorized", "Invalid webhook signature");
  }
  // Signed: only what the signature covers names the event (one signed body is accepted once).
  const identity: Identity =
    secret !== null
      ? await signedIdentity(provider, inbound.headers, inbound.body, inbound.contentType)
      : eventIdentity(provider, inbound.headers, inbound.body, inbound.contentType);
  const sizeBytes = new TextEncoder().encode(inbound.body).byteLength;
  const units = eventUnits(sizeBytes);
  try {
    await consumeQuota(env, { teamId: source.teamId, plan, ownerEmail }, "webhooks", units);
  } catch (error) {
    if (!(error instanceof ApiError)) {
      // The meter cannot be reached: nothing is stored without its units (quotas fail closed).
      log.error("relay: usage meter unavailable", { team_id: source.teamId, error: String(error) });
      throw new ApiError("unavailable", "Event could not be stored; retry later");
    }
    const duplicate = identity.providerEventId ? await findDuplicate(env, source.id, identity.providerEventId) : null;
    if (duplicate) return { id: duplicate.id, event_type: duplicate.eventType, duplicate: true, deliveries: 0 };
    throw error;
  }
  return { identity, sizeBytes, units };
}

/** Gives back the units of an event that was not stored (logged, never thrown: the answer is already an error). */
function giveBack(env: Env, teamId: string, units: number): Promise<void> {
  return releaseQuota(env, teamId, "webhooks", units).catch((error) => log.error("relay: giving back units failed", { team_id: teamId, error: String(error) }));
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
