// Idempotent retries (docs/API.md "Idempotent retries"): the `Idempotency-Key` header on the POSTs that
// create work. The first request with a key claims it for its team in one atomic statement before
// its handler runs; its answer is stored (status, content type, gzip-compressed body encrypted
// with ENCRYPTION_KEY, since create answers carry secrets shown once) and replayed
// to every retry with the same key and the same request for 24 hours, marked
// `Idempotent-Replayed: true`. This file owns the middleware (a route declares `idempotent: true`
// and platform/route-access.ts attaches it after the route's scope check), what the document says
// of an idempotent operation (its shared header parameter, the replay header, the 409), and the
// hourly retention of the keys.
import type { Context, MiddlewareHandler } from "hono";
import { log } from "./log";
import { and, eq, sql } from "drizzle-orm";
import type { AppEnv, Env } from "../env";
import { getDb } from "../db/client";
import { idempotencyKeys } from "../db/schema";
import { readBodyCapped } from "./body";
import { nowMs } from "./clock";
import { defineCron } from "./jobs/cron";
import { decryptBytes, encryptBytes, isSealedBytes, toHex } from "./crypto";
import { ApiError } from "./errors";
import { cutoffIso, deleteInSteps } from "./retention";
import { DELETE_OLD_IDEMPOTENCY_KEYS } from "./retention.queries";

/** The request header (case-insensitive on the wire). */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** The response header marking an answer replayed from the first request. */
export const REPLAYED_HEADER = "Idempotent-Replayed";
/** How long a key and its answer are kept. */
export const IDEMPOTENCY_TTL_HOURS = 24;
/**
 * How long a claim holds without an answer. A request that has not finished by then died with its
 * Worker (CPU limit, deploy, lost connection); the next identical request takes the claim over.
 * Far above what any of these handlers takes (a few D1 statements and one queue send).
 */
export const IDEMPOTENCY_LEASE_MS = 2 * 60_000;
/**
 * Cap of a stored answer body, gzip-compressed. Mail answers echo the messages' html and text, so a
 * batch can run to megabytes raw but compresses well; a body still over the cap is not stored and
 * the key keeps only the status (see `replay`), so the work is still never done twice.
 */
export const STORED_BODY_CAP = 256 * 1024;
/**
 * The largest body hashed. It is the largest body limit of any idempotent route (mail's 10 MiB;
 * route-access.ts refuses an idempotent route declaring more), so a larger body is refused by the
 * route's own reader anyway: it passes through unclaimed and gets that route's own error.
 */
export const HASHED_BODY_LIMIT = 10 * 1024 * 1024;

/** 1 to 255 printable ASCII characters (as Stripe's keys; a UUID v4 is the usual choice). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/**
 * Statuses never stored, so a retry runs the request again: they describe the caller's standing at
 * that moment (credentials, scope or key suspension, a concurrent duplicate, rate limits, quotas and
 * sandbox caps), not the request, and change without the request changing. 5xx are never stored
 * either. Every other 4xx is the request's outcome and is replayed, as Stripe does: fix the request
 * and send it under a new key.
 */
const NOT_STORED = new Set([401, 403, 409, 429]);

interface StoredRow {
  requestHash: string;
  responseStatus: number | null;
  responseType: string | null;
  responseBody: Buffer | null;
  responseBytes: number | null;
}

/**
 * Makes a POST idempotent under the `Idempotency-Key` header; without the header the request runs
 * as before. It runs after the route's authentication and scope check (platform/route-access.ts),
 * so the key is scoped to the caller's team and a caller the route refuses never reaches a claim
 * or a replay: no stored answer (a plaintext token, a `whsec_` secret) and no 422 saying the key is
 * in use ever goes to it.
 * - A new key is claimed atomically, the handler runs, and its answer is stored; a 5xx (or a
 *   thrown error) and the statuses of `NOT_STORED` release the claim instead.
 * - The same key with the same method, path and body replays the stored answer.
 * - The same key with another request answers 422; while the first still runs, 409.
 */
export function idempotent(): MiddlewareHandler<AppEnv> {
  return async function idempotentMiddleware(c, next) {
    const key = c.req.header(IDEMPOTENCY_HEADER);
    if (key === undefined || c.req.method !== "POST") return next();
    if (!KEY_PATTERN.test(key)) {
      throw ApiError.badRequest(`${IDEMPOTENCY_HEADER} must be 1 to 255 printable ASCII characters`);
    }
    let body: Uint8Array;
    try {
      body = await requestBytes(c);
    } catch (error) {
      // Past the limit the route refuses the body itself, in its own shape: nothing to remember.
      if (error === tooLargeToHash) return next();
      throw error;
    }
    const url = new URL(c.req.url);
    const requestHash = await hashRequest(c.req.method, url.pathname + url.search, body);
    const teamId = c.get("principal").teamId;

    const outcome = await claim(c.env, teamId, key, requestHash);
    if (outcome.kind === "replay") {
      c.res = await replay(c.env, outcome.row);
      return;
    }
    const lockId = outcome.lockId;
    try {
      await next();
    } catch (error) {
      await release(c.env, teamId, key, lockId);
      throw error;
    }
    // A thrown error reaches here as the answer onError rendered for it (c.error is set): an
    // ApiError keeps its own status, anything else is a 500.
    const status = c.res.status;
    if (status >= 500 || NOT_STORED.has(status)) {
      await release(c.env, teamId, key, lockId);
      return;
    }
    await store(c.env, teamId, key, lockId, c.res.clone());
  };
}

/**
 * The body to hash, leaving it readable for the route: a copy of the raw stream, or, when a
 * middleware before this one has read it already (audit's JSON check), Hono's cached copy.
 */
async function requestBytes(c: Context<AppEnv>): Promise<Uint8Array> {
  if (c.req.raw.bodyUsed) return new Uint8Array(await c.req.arrayBuffer());
  return readBodyCapped(c.req.raw.clone(), HASHED_BODY_LIMIT, () => tooLargeToHash);
}

/** Thrown by the capped reader past HASHED_BODY_LIMIT; caught above, never rendered. */
const tooLargeToHash = new ApiError("payload_too_large", "Payload too large");

async function hashRequest(method: string, path: string, body: Uint8Array): Promise<string> {
  const head = new TextEncoder().encode(`${method}\n${path}\n`);
  const bytes = new Uint8Array(head.byteLength + body.byteLength);
  bytes.set(head);
  bytes.set(body, head.byteLength);
  return toHex(await crypto.subtle.digest("SHA-256", bytes));
}

type ClaimOutcome = { kind: "claimed"; lockId: string } | { kind: "replay"; row: StoredRow };

/**
 * Claims the key in one statement: an insert, or a takeover of a row that no longer counts (older
 * than the TTL and not yet deleted by the hourly job, or an abandoned claim of the same request).
 * Whoever's lock id comes back holds the claim; everyone else reads the row and is answered from it.
 */
async function claim(env: Env, teamId: string, key: string, requestHash: string): Promise<ClaimOutcome> {
  const db = getDb(env.DB);
  const at = nowMs();
  const nowIso = new Date(at).toISOString();
  const expiredBefore = cutoffIso(at, IDEMPOTENCY_TTL_HOURS / 24);
  // Two rounds: a row released between our insert and our read is claimable again.
  for (let round = 0; round < 2; round++) {
    const lockId = crypto.randomUUID();
    const claimed = await db
      .insert(idempotencyKeys)
      .values({ teamId, key, requestHash, lockId, lockedUntil: new Date(at + IDEMPOTENCY_LEASE_MS).toISOString(), createdAt: nowIso })
      .onConflictDoUpdate({
        target: [idempotencyKeys.teamId, idempotencyKeys.key],
        set: {
          requestHash: sql`excluded.request_hash`,
          lockId: sql`excluded.lock_id`,
          lockedUntil: sql`excluded.locked_until`,
          createdAt: sql`excluded.created_at`,
          responseStatus: null,
          responseType: null,
          responseBody: null,
          responseBytes: null,
        },
        setWhere: sql`${idempotencyKeys.createdAt} < ${expiredBefore}
          OR (${idempotencyKeys.responseStatus} IS NULL AND ${idempotencyKeys.lockedUntil} < ${nowIso} AND ${idempotencyKeys.requestHash} = excluded.request_hash)`,
      })
      .returning({ lockId: idempotencyKeys.lockId });
    if (claimed[0]?.lockId === lockId) return { kind: "claimed", lockId };

    const [row] = await db
      .select({
        requestHash: idempotencyKeys.requestHash,
        responseStatus: idempotencyKeys.responseStatus,
        responseType: idempotencyKeys.responseType,
        responseBody: idempotencyKeys.responseBody,
        responseBytes: idempotencyKeys.responseBytes,
      })
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.teamId, teamId), eq(idempotencyKeys.key, key)));
    if (!row) continue;
    if (row.requestHash !== requestHash) {
      throw ApiError.validation({
        [IDEMPOTENCY_HEADER]: ["was already used with a different request (method, path or body); use a new key for a new request"],
      });
    }
    if (row.responseStatus === null) {
      throw new ApiError("conflict", `A request with this ${IDEMPOTENCY_HEADER} is in progress; retry after it has finished`, {
        headers: { "retry-after": "1" },
      });
    }
    return { kind: "replay", row };
  }
  throw new ApiError("conflict", `A request with this ${IDEMPOTENCY_HEADER} is in progress; retry after it has finished`, {
    headers: { "retry-after": "1" },
  });
}

/** The stored answer, marked as replayed. */
async function replay(env: Env, row: StoredRow): Promise<Response> {
  if (row.responseBody === null) {
    // Over STORED_BODY_CAP: the work is done and must not run again, but its answer is gone.
    throw new ApiError(
      "conflict",
      `A request with this ${IDEMPOTENCY_HEADER} already completed with status ${row.responseStatus}; its response (${row.responseBytes} bytes) was too large to keep for replays, and the work was not repeated`,
      { headers: { [REPLAYED_HEADER]: "true" } },
    );
  }
  const headers = new Headers({ [REPLAYED_HEADER]: "true" });
  if (row.responseType) headers.set("content-type", row.responseType);
  const status = row.responseStatus as number;
  // 204 and 304 carry no body.
  let body: ArrayBuffer | null = null;
  if (status !== 204 && status !== 304) {
    try {
      body = await gunzip(await unseal(env, new Uint8Array(row.responseBody)));
    } catch (error) {
      // Sealed under a key that is gone (ENCRYPTION_KEY rotated without its previous value): the
      // work is done and must not run again, and its answer cannot be read.
      log.error("idempotent answer unreadable", { error: String(error) });
      throw new ApiError(
        "conflict",
        `A request with this ${IDEMPOTENCY_HEADER} already completed with status ${status}; its stored response can no longer be read, and the work was not repeated`,
        {
          headers: { [REPLAYED_HEADER]: "true" },
        },
      );
    }
  }
  return new Response(body, { status, headers });
}

/** Stores the first answer and ends the claim (only the claim holder's row is updated). */
async function store(env: Env, teamId: string, key: string, lockId: string, response: Response): Promise<void> {
  try {
    const raw = new Uint8Array(await response.arrayBuffer());
    // Create answers carry secrets shown once (an ingest token, a `whsec_` secret): the stored
    // copy is encrypted like every other secret at rest.
    const packed = await encryptBytes(env.ENCRYPTION_KEY, await gzip(raw));
    await getDb(env.DB)
      .update(idempotencyKeys)
      .set({
        responseStatus: response.status,
        responseType: response.headers.get("content-type"),
        responseBody: packed.byteLength <= STORED_BODY_CAP ? Buffer.from(packed) : null,
        responseBytes: raw.byteLength,
        lockId: null,
        lockedUntil: null,
      })
      .where(and(eq(idempotencyKeys.teamId, teamId), eq(idempotencyKeys.key, key), eq(idempotencyKeys.lockId, lockId)));
  } catch (error) {
    // The work is done and its answer goes out; a retry within the lease gets 409, after it the
    // claim is taken over. Logged so an operator sees a store that keeps failing.
    log.error("idempotent answer not stored", { team_id: teamId, error: String(error) });
  }
}

/**
 * Gives the key back so a retry runs the request again. A failure here must not hide the answer
 * being released: it is logged, and the claim lapses with its lease.
 */
async function release(env: Env, teamId: string, key: string, lockId: string): Promise<void> {
  try {
    await getDb(env.DB)
      .delete(idempotencyKeys)
      .where(and(eq(idempotencyKeys.teamId, teamId), eq(idempotencyKeys.key, key), eq(idempotencyKeys.lockId, lockId)));
  } catch (error) {
    log.error("idempotency key not released", { team_id: teamId, error: String(error) });
  }
}

/** A stored answer's gzip bytes: decrypted, or as stored by a version that did not encrypt them. */
async function unseal(env: Env, stored: Uint8Array): Promise<Uint8Array> {
  return isSealedBytes(stored) ? decryptBytes(env.ENCRYPTION_KEY, stored, env.ENCRYPTION_KEY_PREVIOUS) : stored;
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function gunzip(bytes: Uint8Array): Promise<ArrayBuffer> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).arrayBuffer();
}

/**
 * Hourly retention: keys older than the TTL are deleted in bounded steps. Replays already ignore
 * them (the claim takes an expired row over), so the job only reclaims space.
 */
export async function idempotencyRetention(env: Env): Promise<number> {
  return deleteInSteps(env.DB, DELETE_OLD_IDEMPOTENCY_KEYS, [cutoffIso(nowMs(), IDEMPOTENCY_TTL_HOURS / 24)]);
}

/** Hourly: the idempotency keys' retention. */
export const idempotencyRetentionCron = defineCron({ name: "idempotency retention", schedule: "hourly", run: idempotencyRetention });

/** The shared header parameter of the OpenAPI document. */
export const IDEMPOTENCY_PARAMETER = {
  name: IDEMPOTENCY_HEADER,
  in: "header",
  required: false,
  description:
    'Makes a retry safe (README "Idempotent retries"). 1 to 255 printable ASCII characters, scoped to your team; a UUID is the usual choice. ' +
    "For 24 hours, the same key with the same method, path and body replays the first answer (status, body and content type) with `Idempotent-Replayed: true` and does no work again. " +
    "The same key with a different request answers 422; while the first request still runs, 409 with `Retry-After`. " +
    "A 5xx, 401, 403, 409 or 429 answer is not kept, so the retry runs again; other answers are. A malformed key answers 400.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
} as const;

/** What the document says of the replay header, as a shared component. */
export const REPLAYED_HEADER_COMPONENT = {
  description: "`true` when this answer is the stored answer of an earlier request with the same Idempotency-Key.",
  schema: { type: "string", enum: ["true"] },
} as const;

/** Registers the shared `IdempotencyKey` parameter and `IdempotentReplayed` header of the document. */
export function registerIdempotencyComponents(registry: { registerComponent(type: "parameters" | "headers", name: string, component: object): unknown }): void {
  registry.registerComponent("parameters", "IdempotencyKey", IDEMPOTENCY_PARAMETER);
  registry.registerComponent("headers", "IdempotentReplayed", REPLAYED_HEADER_COMPONENT);
}

type Responses = Record<string, object>;

/**
 * An idempotent operation's document: the shared header parameter, the replay header on its 2xx
 * answers and a 409 (a request with the same key still in progress) unless it has its own.
 */
export function idempotentOperation<R extends Responses>(responses: R): { parameters: Array<{ $ref: string }>; responses: R } {
  const documented: Responses = {};
  for (const [status, response] of Object.entries(responses)) {
    documented[status] =
      status.startsWith("2") && !("$ref" in response)
        ? { ...response, headers: { ...(response as { headers?: object }).headers, [REPLAYED_HEADER]: { $ref: "#/components/headers/IdempotentReplayed" } } }
        : response;
  }
  documented["409"] ??= {
    description: `A request with the same ${IDEMPOTENCY_HEADER} is still in progress (retry after \`Retry-After\`), in this operation's error shape.`,
  };
  return { parameters: [{ $ref: "#/components/parameters/IdempotencyKey" }], responses: documented as R };
}
