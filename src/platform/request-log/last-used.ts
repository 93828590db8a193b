// A key's "last used": written after the answer, at most once a minute per key, never a D1 write
// per request. An isolate queues a key at most once a minute (a gate per key), and the queued keys
// of many requests go to D1 in one statement (isolate-batch.ts). The statement itself only moves a
// key whose stored time is a minute old or more (last-used.queries.ts), so however many isolates
// use a key, its row changes at most once a minute.
import type { Env } from "../../env";
import { batchPer, type IsolateBatch } from "../isolate-batch";
import { IsolateCache } from "../isolate-cache";
import { touchKeys } from "./last-used.queries";

/** The resolution of "last used", and the least time between two writes of a key. */
export const LAST_USED_EVERY_MS = 60_000;

interface KeyUse {
  keyId: string;
  at: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Keys this isolate queued in the last minute: not queued again before it is over. */
const gate = new IsolateCache<true>({ ttlMs: LAST_USED_EVERY_MS, max: 10_000 });

/** The batch of an environment's D1 (tests may pass other bindings; production has one). */
const keyUses = batchPer<D1Database, KeyUse>((d1) => ({
  name: "last used",
  batchMax: 500,
  pendingMax: 10_000,
  send: async (uses) => {
    await touchKeys(
      d1,
      uses.map((use) => [use.keyId, iso(use.at), iso(use.at - LAST_USED_EVERY_MS)]),
    );
  },
}));

const batchFor = (env: Env): IsolateBatch<KeyUse> => keyUses(env.DB);

/**
 * Notes that `keyId` was used at `at` (ms): queued unless this isolate queued it less than a minute
 * ago. Returns the batch to drain from the request's waitUntil, or null when nothing was queued.
 */
export function touchKey(env: Env, keyId: string, at: number): IsolateBatch<KeyUse> | null {
  if (gate.get(keyId)) return null;
  gate.set(keyId, true, gate.mark());
  const batch = batchFor(env);
  batch.add({ keyId, at });
  return batch;
}

/** Waits until every queued key use is written (tests). */
export function lastUsedSettled(env: Env): Promise<void> {
  return batchFor(env).settled();
}
