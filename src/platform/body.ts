// Request body limits. Every route has one: a 1 MB default for JSON, applied once at the root
// before anything parses a body, and a capped reader for the few routes that read their bodies
// themselves with a documented limit of their own (log ingest, mail send, relay ingest). Both
// refuse a declared Content-Length over the cap without reading, and stop reading a stream as soon
// as more than the cap has arrived, so an oversized body is never buffered whole.
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../env";
import { ApiError } from "./errors";

/** The body limit of every JSON route unless its product documents another. */
export const JSON_BODY_LIMIT = 1024 * 1024;

/** A body-limit middleware: 413 in the request's product error shape once `maxBytes` is passed. */
export function limitBody(maxBytes: number = JSON_BODY_LIMIT): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError("payload_too_large", `Payload too large (max ${formatBytes(maxBytes)})`);
    },
  });
}

/**
 * Reads a request body up to `maxBytes` for routes that read bodies themselves; `tooLarge` makes
 * the product's error for a larger one.
 */
export async function readBodyCapped(request: Request, maxBytes: number, tooLarge: () => ApiError): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
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
  return bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MB` : `${Math.round(bytes / 1024)} KB`;
}
