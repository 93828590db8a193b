// Request body limits. Every route has one, declared with the route (`body` of RouteNeeds,
// platform/route-access.ts): a JSON limit (1 MB unless the route or its product declares another),
// attached as the first middleware of the route, before its credential; or `{ own: N }`, a capped
// reader of N bytes the handler calls itself (log ingest, mail send, relay ingest). Both refuse a
// declared Content-Length over the cap without reading, and stop reading a stream as soon as more
// than the cap has arrived, so an oversized body is never buffered whole.
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../env";
import { ApiError } from "./errors";

/** The body limit of every JSON route unless its product documents another. */
export const JSON_BODY_LIMIT = 1024 * 1024;

/** A route's declared body limit: the JSON limit in bytes, or `{ own: N }` for a handler that reads at most N bytes itself. */
export type BodyLimit = number | { own: number };

/**
 * The message of a 413 (`Payload too large (max 1MB)`, written as the spec writes log ingest's
 * `max 5MB`), also the document's description of it: every product's 413 says its limit this way.
 */
export function tooLargeMessage(maxBytes: number): string {
  return `Payload too large (max ${formatBytes(maxBytes)})`;
}

declare module "hono" {
  interface ContextVariableMap {
    /** A body limit already holds this request's body: a later one (the root's, for what no route answers) leaves it alone. */
    bodyLimited?: boolean;
  }
}

/**
 * A body-limit middleware: 413 in the request's product error shape once `maxBytes` is passed.
 * The first limit a request meets is its limit: a product's unserved path is limited before its
 * credential and then reaches the root's limit for what no route answers, which must not wrap the
 * body a second time (the first has already taken its stream's reader: a 500 the fuzz test found).
 */
export function limitBody(maxBytes: number = JSON_BODY_LIMIT): MiddlewareHandler<AppEnv> {
  const limit = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError("payload_too_large", tooLargeMessage(maxBytes));
    },
  });
  return async function limitBodyMiddleware(c, next) {
    if (c.get("bodyLimited")) return next();
    c.set("bodyLimited", true);
    return limit(c, next);
  };
}

/**
 * Reads a request body up to `maxBytes` for routes that read bodies themselves; `tooLarge` makes
 * the product's error for a larger one.
 */
export async function readBodyCapped(request: Request, maxBytes: number, tooLarge: () => ApiError): Promise<Uint8Array> {
  const length = request.headers.get("content-length");
  const declared = length === null ? Number.NaN : Number(length);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
  // A declared length within the cap is the body's length (the runtime frames the body by it and
  // never hands over more), so it is read in one native call instead of chunk by chunk.
  if (Number.isFinite(declared)) {
    const body = new Uint8Array(await request.arrayBuffer());
    if (body.byteLength > maxBytes) throw tooLarge();
    return body;
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024}MB` : `${Math.round(bytes / 1024)}KB`;
}
