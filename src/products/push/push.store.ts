// The Worker's side of the per-app push store (store/push-store.ts): the stub of an app's object,
// the 503 a request answers when the store cannot be reached (nothing was stored: each store call
// is one transaction), and the write that keeps the app row's subscriber_count in step with the
// store. That count is written with the store's sequence number of the change and D1 keeps only a
// newer one, so answers arriving out of order never set an older count; if the write fails, the
// next change of the app's subscribers or the store's alarm (which rewrites it) brings it back.
import { namedObject } from "../../platform/durable-objects";
import { log } from "../../platform/log";
import type { Env } from "../../env";
import { ApiError } from "../../platform/errors";
import type { CountState, PushStore } from "./store/push-store";
import { SYNC_COUNT } from "./store/push-store.queries";

/** The store of one app: one object per app id. Callers reach it only for an app of the caller's team. */
export function pushStore(env: Env, appId: string): DurableObjectStub<PushStore> {
  return namedObject(env.PUSH_STORE, appId);
}

export const storeUnavailable = () => new ApiError("unavailable", "Push storage temporarily unavailable");

/** Runs a store call for a request: a store that fails answers 503 (its transaction stored nothing). */
export async function inStore<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    log.error("push store call failed", { error: String(error) });
    throw storeUnavailable();
  }
}

/**
 * Writes the store's count to the app row unless D1 holds a newer one. A failure is logged, not
 * thrown: the subscriber change it reports is stored, and the count comes back with the next change
 * or the store's alarm.
 */
export async function syncCount(env: Env, appId: string, state: CountState): Promise<void> {
  try {
    await env.DB.prepare(SYNC_COUNT).bind(state.count, state.seq, appId).run();
  } catch (error) {
    log.error("push: subscriber_count not written; the store's alarm rewrites it", { app_id: appId, error: String(error) });
  }
}
