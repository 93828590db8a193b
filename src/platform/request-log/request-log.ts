// The request log's writing side: a root middleware notes every request made with a team API key
// (auth() set a principal: not log ingest, not public routes, not the operator API) after it has
// answered, and hands it to the isolate's batch (isolate-batch.ts), which writes the rows of many
// requests to each team's RequestLogStore in one call per team. The key's "last used" is noted in
// the same step (last-used.ts). On the request's own path this costs building one small row; the
// writes run from its waitUntil. Request bodies are never kept; an error's body is ours and is
// kept up to ERROR_BODY_MAX bytes.
import { namedObject } from "../durable-objects";
import type { MiddlewareHandler } from "hono";
import type { AppEnv, Env } from "../../env";
import { nowMs } from "../clock";
import { batchPer, groupBy } from "../isolate-batch";
import { backgroundOf } from "../request-context";
import { touchKey } from "./last-used";
import type { RequestLogRow } from "./request-log.types";
import { settings } from "../config";

/** Bytes of an error body kept. */
export const ERROR_BODY_MAX = 4096;
/** Characters of a path kept. */
export const PATH_MAX = 1024;
/** How long the isolate gathers rows before a write to the request log. */
export const REQUEST_LOG_LINGER_MS = 50;

interface TeamRow {
  teamId: string;
  row: RequestLogRow;
}

/** The batch of an environment's request log namespace (one per isolate in production). */
const teamRows = batchPer<Env["REQUEST_LOG_STORE"], TeamRow>((namespace) => ({
  name: "request log",
  // ~200 rows of at most ~5 KB: one call's argument stays far under the RPC and SQL string limits.
  batchMax: 200,
  pendingMax: 10_000,
  // A write carries the rows of 50 ms, not of the few requests in flight: under load the
  // store's calls and transactions per request fall several-fold (docs/BENCHMARKS.md).
  lingerMs: REQUEST_LOG_LINGER_MS,
  send: async (items) => {
    const byTeam = groupBy(
      items,
      (item) => item.teamId,
      (item) => item.row,
    );
    const now = nowMs();
    await Promise.all([...byTeam].map(([teamId, rows]) => namedObject(namespace, teamId).append(rows, now)));
  },
}));

const batchFor = (env: Env) => teamRows(env.REQUEST_LOG_STORE);

/** The stub of a team's request log. */
export function requestLogStore(env: Env, teamId: string) {
  return namedObject(env.REQUEST_LOG_STORE, teamId);
}

/** Requests of this isolate whose row is being made (their error body read): requestLogSettled waits for them. */
const recording = new Set<Promise<void>>();

/** Waits until every row this isolate holds or is making is written (tests). */
export async function requestLogSettled(env: Env): Promise<void> {
  await Promise.all(recording);
  await batchFor(env).settled();
}

/** Root middleware: notes each request made with a team API key once it has answered. */
export function requestLog(): MiddlewareHandler<AppEnv> {
  return async function requestLogMiddleware(c, next) {
    const at = nowMs();
    const started = Date.now();
    await next();
    const principal = c.get("principal");
    if (!principal || !settings(c.env).requestLog) return;
    const background = backgroundOf(c);
    if (!background) return;
    const latency = Date.now() - started;
    const status = c.res.status;
    // Our own error body, read after the answer from a copy (never a request body).
    const copy = status >= 400 ? c.res.clone() : null;
    const env = c.env;
    const base = [
      at,
      c.req.method.slice(0, 16),
      c.req.path.slice(0, PATH_MAX),
      status,
      latency,
      principal.keyId,
      principal.keyPrefix,
      c.get("requestId"),
    ] as const;
    const lastUse = touchKey(env, principal.keyId, at);
    const batch = batchFor(env);
    if (copy) {
      const made = readCapped(copy, ERROR_BODY_MAX).then((errorBody) => batch.add({ teamId: principal.teamId, row: [...base, errorBody] }));
      recording.add(made);
      void made.finally(() => recording.delete(made));
      background.waitUntil(made.then(() => Promise.all([batch.drain(), lastUse?.drain()])));
    } else {
      batch.add({ teamId: principal.teamId, row: [...base, null] });
      // Nothing to keep alive when the write in flight and its standby carry this row (and the key's use).
      const drains = [batch.drain(), lastUse?.drain()].filter((drain) => drain);
      if (drains.length > 0) background.waitUntil(Promise.all(drains));
    }
  };
}

/** The first `max` bytes of a response's body as text (cut on a character boundary); the rest is never read. */
export async function readCapped(response: Response, max: number): Promise<string | null> {
  const reader = response.body?.getReader();
  if (!reader) return null;
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    while (bytes < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.byteLength;
    }
  } catch {
    return null;
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  const all = new Uint8Array(Math.min(bytes, max));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, all.byteLength - offset);
    all.set(part, offset);
    offset += part.byteLength;
    if (offset >= all.byteLength) break;
  }
  // A multi-byte character cut at the end decodes to U+FFFD: drop it.
  return new TextDecoder().decode(all).replace(/\uFFFD$/, "");
}
