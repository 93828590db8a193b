// Replaying a stored webhook event: choosing the destinations (D1), then the accept step
// (platform/jobs/accept.ts): the `webhooks` quota, the new deliveries in the source's store, their
// queue messages, the first attempt in the background of the request. The source is found under the team before its store is asked;
// no Hono context here.
import { and, asc, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { webhookDestinations } from "../../db/schema";
import { nowIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { accept } from "../../platform/jobs/accept";
import type { QuotaOwner } from "../../platform/quota";
import { ownedBy, orNotFound } from "../../platform/tenancy";
import { attemptNow } from "./relay.consumer";
import { filterAdmits } from "./relay.inbound";
import type { Background } from "../../platform/jobs/accept";
import { enqueueDeliveries, RelayErrors } from "./relay.service";
import { relayStore } from "./relay.store";
import { loadSource } from "./relay-sources.service";

/**
 * Re-queues a stored event to every enabled destination whose filter admits it now, or to the
 * listed `destinationIds` only (so a destination that missed it gets it without the healthy ones
 * getting it twice). A listed id must be a destination of this source (any other, of this team or
 * another, answers the same 422, never confirming it exists), enabled, and admit the event's type.
 */
export async function replayEvent(env: Env, owner: QuotaOwner, sourceId: string, eventId: string, background: Background | null, destinationIds?: string[]) {
  const teamId = owner.teamId;
  const db = getDb(env.DB);
  await loadSource(db, teamId, sourceId);
  const store = relayStore(env, sourceId);
  const [event, sourceDestinations] = await Promise.all([
    store.eventType(eventId),
    db
      .select({ id: webhookDestinations.id, eventFilter: webhookDestinations.eventFilter, enabled: webhookDestinations.enabled })
      .from(webhookDestinations)
      .where(and(ownedBy(webhookDestinations, teamId), eq(webhookDestinations.sourceId, sourceId)))
      .orderBy(asc(webhookDestinations.createdAt), asc(webhookDestinations.id)),
  ]);
  const found = orNotFound(event, RelayErrors.event);
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
  const deliveries = destinations.map((d) => ({ id: crypto.randomUUID(), destinationId: d.id }));
  if (deliveries.length > 0) {
    const ids = deliveries.map((d) => d.id);
    // Each delivery a replay creates is outbound work the team asked for: one `webhooks` unit each
    // (429, nothing created, when the quota is short). As on ingest: the first attempt at once, the
    // queued messages as its safety net and retries; a refused message is logged and the store's
    // alarm queues the stored delivery again once it is overdue.
    await accept({
      name: "relay replay",
      env,
      quota: { owner, service: "webhooks", units: deliveries.length },
      store: async () => {
        // False: the event was purged by retention meanwhile (404, the units go back).
        if (!(await store.addDeliveries(eventId, deliveries, at))) throw RelayErrors.event();
      },
      unavailable: () => new ApiError("unavailable", "Replay could not be stored; retry later"),
      enqueue: () => enqueueDeliveries(env, sourceId, ids),
      attempt: () => attemptNow(env, sourceId, ids),
      background,
    });
  }
  return { count: deliveries.length, destination_ids: deliveries.map((d) => d.destinationId) };
}
