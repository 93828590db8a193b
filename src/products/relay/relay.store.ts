// The Worker's side of the per-source relay store (store/relay-store.ts): the stub of a source's
// object, and the writes made per event (its ingest, its attempts' records) coalesced per isolate
// and source into one line (platform/coalesce.ts): concurrent events of one source share one call, each
// answered as if alone. Only a source id read from D1 under the caller's team (or from a queue
// message the relay wrote) names an object, so another team's ids never reach or create a store.
import { namedObject } from "../../platform/durable-objects";
import type { Env } from "../../env";
import { Coalescer, type KeepAlive } from "../../platform/coalesce";
import type { AttemptRecord, IngestAnswer, IngestInput, RelayStore, StoreWrite } from "./store/relay-store";

/** The store of one source: one object per source id, wherever Cloudflare places it. */
export function relayStore(env: Env, sourceId: string): DurableObjectStub<RelayStore> {
  return namedObject(env.RELAY_STORE, sourceId);
}

/** An answer of a batched call, or the error of its own item (the others stand). */
type Outcome<A> = A | { error: string };

function settle<A>(outcome: Outcome<A>): A {
  if (outcome !== null && typeof outcome === "object" && "error" in outcome) throw new Error(outcome.error);
  return outcome;
}

/** The writes of each source's events, one line per source: an ingest and a record made at once share a call. */
const linesOf = new WeakMap<object, Coalescer<StoreWrite, Outcome<IngestAnswer | boolean>>>();

function lines(env: Env): Coalescer<StoreWrite, Outcome<IngestAnswer | boolean>> {
  let found = linesOf.get(env.RELAY_STORE);
  if (!found) {
    const namespace = env.RELAY_STORE;
    found = new Coalescer(async (sourceId, writes) => (await namedObject(namespace, sourceId).writeMany(writes)) as Outcome<IngestAnswer | boolean>[], {
      // An event carries its body (up to 1 MB) and headers; a record, the first KB of an answer.
      weigh: (write) =>
        "ingest" in write ? write.ingest.event.body.length + write.ingest.event.headers.length : (write.record.attempt.responseBody?.length ?? 0),
    });
    linesOf.set(env.RELAY_STORE, found);
  }
  return found;
}

/** Stores an event with its deliveries (RelayStore.writeMany), in a call shared with the source's concurrent writes. */
export async function ingestEvent(env: Env, input: IngestInput, keepAlive?: KeepAlive): Promise<IngestAnswer> {
  return settle(await lines(env).run(input.sourceId, { ingest: input }, keepAlive)) as IngestAnswer;
}

/** Records an attempt (RelayStore.writeMany), in a call shared with the source's concurrent writes. */
export async function recordAttempt(env: Env, sourceId: string, record: AttemptRecord, keepAlive?: KeepAlive): Promise<boolean> {
  return settle(await lines(env).run(sourceId, { record }, keepAlive)) as boolean;
}
