// Rate-limit middleware: a route names its bucket, the middleware counts the request in that
// bucket's Durable Object and refuses with the spec's 429 when the window is full. The result is
// kept on the context; the root middleware writes the x-ratelimit-* headers on every response, so
// the last bucket evaluated is the one the headers show (strict overwrites default).
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import { ApiError } from "../errors";
import { bucketLimit, type BucketName, type StrictFamily } from "./buckets";
import { getLimiter, type RateLimitResult } from "./limiter";

declare module "hono" {
  interface ContextVariableMap {
    rateLimit?: RateLimitResult;
  }
}

/** The client IP as Cloudflare reports it; never a caller-controlled forwarding header. */
export function clientIp(c: Context): string {
  return c.req.header("cf-connecting-ip") ?? "unknown";
}

/**
 * Counts the request in `bucket` under `key` and throws the 429 when the bucket is full.
 * A null limit (enterprise) makes no Durable Object call at all.
 */
export async function enforceBucket(c: Context<AppEnv>, bucket: BucketName, key: string, plan?: string): Promise<void> {
  const limit = bucketLimit(bucket, plan);
  if (limit === null) return;
  const result = await getLimiter(c.env).hit(`${bucket}:${key}`, limit);
  c.set("rateLimit", result);
  if (!result.allowed) throw ApiError.rateLimited(result.retryAfter);
}

/** The key of a team's counter in one `strict` family. */
export function strictKey(teamId: string, family: StrictFamily): string {
  return `team:${teamId}:${family}`;
}

export type RateLimitOptions =
  /** `strict` is counted per team and endpoint family. */
  | { bucket: "strict"; family: StrictFamily }
  /** Other buckets: keyed on the caller's team for `default`, else on the client IP. */
  | { bucket: Exclude<BucketName, "strict"> };

/** Adds a bucket to a route: `rateLimit({ bucket: "strict", family: "push_subscribers" })`. */
export function rateLimit(options: RateLimitOptions): MiddlewareHandler<AppEnv> {
  return async function rateLimitMiddleware(c, next) {
    const principal = c.get("principal");
    const key =
      options.bucket === "strict" && principal
        ? strictKey(principal.teamId, options.family)
        : principal && options.bucket === "default"
          ? `team:${principal.teamId}`
          : `ip:${clientIp(c)}`;
    await enforceBucket(c, options.bucket, key, principal?.plan);
    await next();
  };
}

/** Writes the headers of the last evaluated bucket onto a response. */
export function rateLimitHeaders(result: RateLimitResult): Record<string, string> {
  return {
    "x-ratelimit-limit": String(result.limit),
    "x-ratelimit-remaining": String(result.remaining),
    "x-ratelimit-reset": String(result.reset),
  };
}
