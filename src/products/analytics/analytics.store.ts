// The Worker's side of the analytics stores: the stub of a site's store, the daily salt as this
// isolate holds it, and the isolate's batch of counted events (platform/isolate-batch.ts, as the
// request log does): an event is added after its unit is taken and its request has answered 202;
// the batch writes the events of many requests in one call per site (AnalyticsStore.append), led
// from the waitUntil of the requests that added them.
//
// What an isolate dying can lose: the events it holds and has not written yet, at most those of
// one linger (ANALYTICS_LINGER_MS) plus a write in flight (up to EVENT_BATCH_MAX per site), whose
// units were taken; events are counted at most once, never twice (a write is one transaction, and
// a failed write is dropped and logged, not retried). Under normal shutdown the waitUntil of the
// last requests finishes the write.
import type { Env } from "../../env";
import { namedObject } from "../../platform/durable-objects";
import { batchPer, groupBy, type IsolateBatch } from "../../platform/isolate-batch";
import { SALT_OBJECT } from "./store/analytics-salt";
import type { StoredEvent } from "./store/analytics-store";

/** How long the leading request gathers events before a write. */
export const ANALYTICS_LINGER_MS = 50;
/** Events one write carries at most (each ~200 bytes to a few KB with props). */
export const EVENT_BATCH_MAX = 500;

/** The store of one site: one object per site id. */
export function analyticsStore(env: Env, siteId: string) {
  return namedObject(env.ANALYTICS_STORE, siteId);
}

interface SiteEvent {
  siteId: string;
  event: StoredEvent;
}

/** One batch of counted events per ANALYTICS_STORE namespace, one store call per site a write. */
const siteEvents = batchPer<Env["ANALYTICS_STORE"], SiteEvent>((namespace) => ({
  name: "analytics events",
  batchMax: EVENT_BATCH_MAX,
  pendingMax: 20_000,
  lingerMs: ANALYTICS_LINGER_MS,
  send: async (items) => {
    const bySite = groupBy(
      items,
      (item) => item.siteId,
      (item) => item.event,
    );
    await Promise.all([...bySite].map(([siteId, events]) => namedObject(namespace, siteId).append(events)));
  },
}));

/** The isolate's batch of counted events for an environment's stores. */
export function eventBatch(env: Env): IsolateBatch<SiteEvent> {
  return siteEvents(env.ANALYTICS_STORE);
}

/** Waits until every event this isolate holds is written (tests, the bench's twin). */
export function analyticsSettled(env: Env): Promise<void> {
  return eventBatch(env).settled();
}

/** The salt of the day this isolate holds, by namespace. */
const salts = new WeakMap<object, { day: string; salt: string }>();

/**
 * The salt of `day` (UTC `YYYY-MM-DD`): from this isolate's copy, else from the salt store (one
 * call per isolate and day; concurrent first events each ask, as a request must not wait on
 * another request's I/O). The copy of an older day is dropped as soon as a later day is asked.
 */
export async function dailySalt(env: Env, day: string): Promise<string> {
  const held = salts.get(env.ANALYTICS_SALT);
  if (held && held.day === day) return held.salt;
  const fresh = await namedObject(env.ANALYTICS_SALT, SALT_OBJECT).saltFor(day);
  if (!held || fresh.day >= held.day) salts.set(env.ANALYTICS_SALT, fresh);
  return fresh.salt;
}
