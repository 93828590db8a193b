// The root error handler: ApiError is rendered in the shape of the product serving the request
// (set in the context by the router table, src/platform/router.ts);
// framework errors are mapped to ApiError first; anything else is logged with the request id and
// answered 500 without a stack trace.
import { log } from "./log";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "../env";
import { ApiError, MALFORMED_JSON, renderError, UNSUPPORTED_MEDIA_TYPE, type ErrorCode } from "./errors";

/**
 * The framework's own messages that a person cannot act on, in the platform's words: the JSON
 * validator's parse failure (one wording with the products that parse by hand) and the 415 of
 * @hono/zod-openapi, which does not say what to send.
 */
function frameworkMessage(error: HTTPException): string {
  if (error.status === 415) return UNSUPPORTED_MEDIA_TYPE;
  if (error.status === 400 && /^Malformed JSON/i.test(error.message)) return MALFORMED_JSON;
  return error.message || "Bad request";
}

/** Framework errors by status; any other 4xx is a bad request, any 5xx an internal error. */
const HTTP_CODES: Record<number, ErrorCode> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "validation",
  429: "rate_limited",
};

export function toApiError(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (error instanceof HTTPException) {
    const code = HTTP_CODES[error.status] ?? (error.status >= 500 ? "internal" : "bad_request");
    return new ApiError(code, frameworkMessage(error));
  }
  return null;
}

export function handleError(error: unknown, c: Context<AppEnv>): Response {
  const requestId = c.get("requestId") ?? crypto.randomUUID();
  let apiError = toApiError(error);
  if (!apiError) {
    log.error("unhandled error", { request_id: requestId, path: c.req.path, error: String(error), stack: (error as Error)?.stack });
    apiError = new ApiError("internal", "Internal server error");
  }
  const body = renderError(apiError, c.get("errorFormat"), requestId);
  return c.json(body as object, apiError.status, apiError.headers);
}
