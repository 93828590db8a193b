// Replaying a stored webhook event: choosing the destinations, charging the `webhooks` quota, and
// writing and queuing the new deliveries, with the first attempt in the background of the request.
// Every query filters on the team; no Hono context here.
import { and, asc, eq, inArray } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { webhookDeliveries, webhookDestinations, webhookEvents } from "../../db/schema";
import { nowIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { consumeQuota, releaseQuota, type QuotaOwner } from "../../platform/quota";
import { ownedBy, ownedRow, orNotFound } from "../../platform/tenancy";
import { attemptNow } from "./relay.consumer";
import { filterAdmits } from "./relay.inbound";
import { deliveryInserts, enqueueDeliveries, newDelivery, RelayErrors, type Background } from "./relay.service";
import { loadSource } from "./relay-sources.service";

/**
 * Re-queues a stored event to every enabled destination whose filter admits it now, or to the
 * listed `destinationIds` only (so a destination that missed it gets it without the healthy ones
 * getting it twice). A listed id must be a destination of this source (any other, of this team or
 * another, answers the same 422, never confirming it exists), enabled, and admit the event's type.
 */
export async function replayEvent(env: Env, owner: QuotaOwner, sourceId: string, eventId: string, background: Background, destinationIds?: string[]) {
  const teamId = owner.teamId;
  const db = getDb(env.DB);
  await loadSource(db, teamId, sourceId);
  const [[event], sourceDestinations] = await db.batch([
    db
      .select({ id: webhookEvents.id, eventType: webhookEvents.eventType })
      .from(webhookEvents)
      .where(and(ownedRow(webhookEvents, teamId, eventId), eq(webhookEvents.sourceId, sourceId)))
      .limit(1),
    db
      .select({ id: webhookDestinations.id, eventFilter: webhookDestinations.eventFilter, enabled: webhookDestinations.enabled })
      .from(webhookDestinations)
      .where(and(ownedBy(webhookDestinations, teamId), eq(webhookDestinations.sourceId, sourceId)))
      .orderBy(asc(webhookDestinations.createdAt), asc(webhookDestinations.id)),
  ]);
  const found = orNotFound(event, RelayErrors.event());
  let destinations: typeof sourceDestinations;
  if (destinationIds === undefined) {
    destinations = sourceDestinations.filter((d) => d.enabled && filterAdmits(d.eventFilter, found.eventType));
  } else {
    const wanted = new Set(destinationIds);
    const byId = new Map(sourceDestinations.map((d) => [d.id, d]));
    const problems: string[] = [];
    for (const id of wanted) {
      const d = byId.get(id);
      if (!d) problems.push(`${id} is not a destination of this source`);
      else if (!d.enabled) problems.push(`${id} is disabled; enable it first`);
      else if (!filterAdmits(d.eventFilter, found.eventType)) problems.push(`${id} does not admit event type ${found.eventType ?? "(none)"}`);
    }
    if (problems.length > 0) throw ApiError.validation({ destination_ids: problems });
    destinations = sourceDestinations.filter((d) => wanted.has(d.id));
  }
  const at = nowIso();
  const deliveries = destinations.map((d) => newDelivery(teamId, eventId, d.id, "replay", at));
  const inserts = deliveryInserts(db, deliveries);
  if (inserts.length > 0) {
    // Each delivery a replay creates is outbound work the team asked for: one `webhooks` unit each
    // (429, nothing created, when the quota is short; given back when nothing could be queued).
    await consumeQuota(env, owner, "webhooks", deliveries.length);
    try {
      await db.batch(inserts as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
    } catch (error) {
      await releaseQuota(env, teamId, "webhooks", deliveries.length);
      throw error;
    }
    try {
      await enqueueDeliveries(env, deliveries.map((d) => d.id));
    } catch (error) {
      await releaseQuota(env, teamId, "webhooks", deliveries.length);
      await db.delete(webhookDeliveries).where(inArray(webhookDeliveries.id, deliveries.map((d) => d.id)));
      console.error(JSON.stringify({ msg: "relay replay enqueue failed", eventId, error: String(error) }));
      throw new ApiError("unavailable", "Replay could not be queued; retry later");
    }
    // As on ingest: the first attempt at once, the queued messages as its safety net and retries.
    background.waitUntil(attemptNow(env, deliveries.map((d) => d.id)));
  }
  return { count: deliveries.length, destination_ids: deliveries.map((d) => d.destinationId) };
}
