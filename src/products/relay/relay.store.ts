// The Worker's side of the per-source relay store (store/relay-store.ts): the stub of a source's
// object, and the two calls made per event (its ingest, its first attempt's record) coalesced per
// isolate and source (platform/coalesce.ts): concurrent events of one source share one call, each
// answered as if alone. Only a source id read from D1 under the caller's team (or from a queue
// message the relay wrote) names an object, so another team's ids never reach or create a store.
import { namedObject } from "../../platform/durable-objects";
import type { Env } from "../../env";
import { Coalescer, type KeepAlive } from "../../platform/coalesce";
import type { AttemptRecord, IngestAnswer, IngestInput, RelayStore } from "./store/relay-store";

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

interface Lines {
  ingests: Coalescer<IngestInput, Outcome<IngestAnswer>>;
  records: Coalescer<AttemptRecord, Outcome<boolean>>;
}

const linesOf = new WeakMap<object, Lines>();

function lines(env: Env): Lines {
  let found = linesOf.get(env.RELAY_STORE);
  if (!found) {
    const namespace = env.RELAY_STORE;
    const stub = (sourceId: string) => namedObject(namespace, sourceId);
    found = {
      ingests: new Coalescer(async (sourceId, inputs) => (await stub(sourceId).ingestMany(inputs)) as Outcome<IngestAnswer>[]),
      records: new Coalescer(async (sourceId, records) => (await stub(sourceId).recordAttempts(records)) as Outcome<boolean>[]),
    };
    linesOf.set(env.RELAY_STORE, found);
  }
  return found;
}

/** Stores an event with its deliveries (RelayStore.ingestMany), in a call shared with the source's concurrent ingests. */
export async function ingestEvent(env: Env, input: IngestInput, keepAlive?: KeepAlive): Promise<IngestAnswer> {
  return settle(await lines(env).ingests.run(input.sourceId, input, keepAlive));
}

/** Records an attempt (RelayStore.recordAttempts), in a call shared with the source's concurrent records. */
export async function recordAttempt(env: Env, sourceId: string, record: AttemptRecord, keepAlive?: KeepAlive): Promise<boolean> {
  return settle(await lines(env).records.run(sourceId, record, keepAlive));
}
