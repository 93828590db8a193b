// Root middleware: a request id for every request, and on the way out the x-request-id and
// x-ratelimit-* headers of the last bucket evaluated, whatever produced the response; the log scope
// that puts the request id on every line the request logs. Also the request's waitUntil, for the
// work that runs after the answer.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { withLogScope } from "./log";
import { rateLimitHeaders } from "./rate-limit/middleware";

const INCOMING_ID = /^[\w.-]{1,128}$/;

export function requestContext(): MiddlewareHandler<AppEnv> {
  return async function requestContextMiddleware(c, next) {
    const incoming = c.req.header("x-request-id");
    c.set("requestId", incoming && INCOMING_ID.test(incoming) ? incoming : crypto.randomUUID());
    // Every line the request logs (its waitUntil work included) carries its id.
    await withLogScope({ request_id: c.get("requestId") }, next);
    const headers: Record<string, string> = { "x-request-id": c.get("requestId") };
    const limit = c.get("rateLimit");
    if (limit) Object.assign(headers, rateLimitHeaders(limit));
    try {
      for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
    } catch {
      // Responses passed through from fetch() or R2 have immutable headers: copy once.
      c.res = new Response(c.res.body, c.res);
      for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
    }
  };
}

// The request's background and keep-alive live beside Background (jobs/commit.ts), where the
// rate limiter can import them without a cycle through this module.
export { backgroundOf, backgroundOrDetached, keepAliveFrom, keepAliveOf } from "./jobs/commit";
