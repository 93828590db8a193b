// The stub of a Durable Object named by a string (a team, a source, a project, an IP bucket): the
// one way the Worker reaches its objects. `idFromName` derives the id with a keyed hash on every
// call (a profile of relay ingest put it at ~2% of the Worker's thread); an id is a plain value,
// the same for a name on every isolate and for ever, so each isolate derives it once per name and
// keeps it (bounded: the oldest goes first). The stub itself is made per call: it belongs to the
// request that uses it.

/** Ids kept per namespace and isolate; past this the oldest is derived again when next named. */
export const OBJECT_IDS_MAX = 10_000;

const idsOf = new WeakMap<object, Map<string, DurableObjectId>>();

/** The id of the object `name` in `namespace`, derived once per isolate. */
export function objectId(namespace: DurableObjectNamespace, name: string): DurableObjectId {
  let ids = idsOf.get(namespace);
  if (!ids) {
    ids = new Map();
    idsOf.set(namespace, ids);
  }
  let id = ids.get(name);
  if (!id) {
    id = namespace.idFromName(name);
    if (ids.size >= OBJECT_IDS_MAX) ids.delete(ids.keys().next().value!);
    ids.set(name, id);
  }
  return id;
}

/** The stub of the object `name` in `namespace`. */
export function namedObject<T extends Rpc.DurableObjectBranded | undefined>(namespace: DurableObjectNamespace<T>, name: string): DurableObjectStub<T> {
  return namespace.get(objectId(namespace, name));
}
