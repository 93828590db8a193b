// The Worker's side of the per-source relay store (store/relay-store.ts): the stub of a source's
// object. Only a source id read from D1 under the caller's team (or from a queue message the relay
// wrote) names an object, so another team's ids never reach or create a store.
import type { Env } from "../../env";
import type { RelayStore } from "./store/relay-store";

/** The store of one source: one object per source id, wherever Cloudflare places it. */
export function relayStore(env: Env, sourceId: string): DurableObjectStub<RelayStore> {
  return env.RELAY_STORE.get(env.RELAY_STORE.idFromName(sourceId));
}
