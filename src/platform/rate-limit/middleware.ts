// Rate-limit middleware: a route names its bucket, the middleware counts the request in that
// bucket's Durable Object and refuses with the spec's 429 when the window is full. The result is
// kept on the context; the root middleware writes the x-ratelimit-* headers on every response, so
// the last bucket evaluated is the one the headers show (strict overwrites default).
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import { ApiError } from "../errors";
import { bucketLimit, type BucketName } from "./buckets";
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

export interface RateLimitOptions {
  bucket: BucketName;
  /** What the bucket is keyed on; defaults to the caller's team for team buckets, else the client IP. */
  key?: (c: Context<AppEnv>) => string | Promise<string>;
}

/** Adds a bucket to a route: `rateLimit({ bucket: "strict" })`. */
export function rateLimit(options: RateLimitOptions): MiddlewareHandler<AppEnv> {
  return async function rateLimitMiddleware(c, next) {
    const principal = c.get("principal");
    const key = options.key
      ? await options.key(c)
      : principal && (options.bucket === "strict" || options.bucket === "default")
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
