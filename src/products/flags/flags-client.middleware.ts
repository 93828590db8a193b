// The client credential of the flags product (`Authorization: Bearer fck_…`; the stream, which an
// EventSource opens without headers, takes `?key=`): the request is counted in `flags_client_ip`
// (its client network), whose refusal comes first, beside the key's look-up and its count in
// `flags_client` (the key, at the plan's API rate), never in the team's default bucket; the
// headers show the key's. A team
// key answers 401 here. CORS: preflights are answered from any origin without counting anything;
// a key with `allowed_origins` refuses a browser request from another origin (403).
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import { bearerToken } from "../../platform/auth";
import { ApiError } from "../../platform/errors";
import { besideCount, countBeside, enforceBesideCount, ipKey } from "../../platform/rate-limit/middleware";
import { takeUnitAhead } from "../../platform/quota";
import { backgroundOrDetached } from "../../platform/request-context";
import { type ClientPrincipal, isClientKey, resolveClientKey } from "./flags-client-keys.service";

declare module "hono" {
  interface ContextVariableMap {
    /** The flags client key the request was made with. */
    flagsClient?: ClientPrincipal;
  }
}

export const CLIENT_KEY_REFUSED = "Invalid or missing client key";

/** The client key's principal (set by clientKeyAuth). */
export function clientOf(c: { get(key: "flagsClient"): ClientPrincipal | undefined }): ClientPrincipal {
  const principal = c.get("flagsClient");
  if (!principal) throw ApiError.unauthorized(CLIENT_KEY_REFUSED);
  return principal;
}

/**
 * Counts the client network, resolves the client key, counts the key; 401 for anything but a live
 * client key. The network's count runs beside the key's look-up and the key's count (one round
 * trip where there were three in series) and its refusal still comes first; a network this
 * isolate knows refused is answered from memory, before any look-up. With `evaluates` (a route
 * that spends an `evaluations` unit unless it answers 304), the unit is taken ahead in that round
 * trip too (`flagsUnit`; spendEvaluation keeps it, withUnitSettled gives it back otherwise).
 */
export async function authenticateClient(c: Parameters<MiddlewareHandler<AppEnv>>[0], token: string | null, evaluates = false): Promise<ClientPrincipal> {
  const admitted = countBeside(c, "flags_client_ip", ipKey(c));
  let principal: ClientPrincipal | null;
  try {
    principal = token && isClientKey(token) ? await resolveClientKey(c.env, token) : null;
  } catch (error) {
    throw (await admitted) ?? error;
  }
  if (!principal) throw (await admitted) ?? ApiError.unauthorized(CLIENT_KEY_REFUSED);
  const background = backgroundOrDetached(c);
  const [counted, unit] = await Promise.allSettled([
    enforceBesideCount(c, admitted, "flags_client", `key:${principal.keyId}`, principal.plan),
    evaluates ? besideCount(admitted, takeUnitAhead(c.env, principal, "flags", background), async (taken) => taken.unspent()) : null,
  ]);
  if (counted.status === "rejected") {
    if (unit.status === "fulfilled") unit.value?.unspent();
    throw counted.reason;
  }
  if (unit.status === "rejected") throw unit.reason;
  if (unit.value) c.set("flagsUnit", unit.value);
  const origin = c.req.header("origin");
  if (origin && principal.allowedOrigins.length > 0 && !principal.allowedOrigins.includes(origin)) {
    unit.value?.unspent();
    throw ApiError.forbidden("Origin not allowed for this client key");
  }
  c.set("flagsClient", principal);
  return principal;
}

/** Runs the route, then gives back a unit taken ahead that it did not spend (a 304, an error). */
export async function withUnitSettled(c: Parameters<MiddlewareHandler<AppEnv>>[0], next: () => Promise<void>): Promise<void> {
  try {
    await next();
  } finally {
    c.get("flagsUnit")?.unspent();
  }
}

/** The client routes' credential (productRoutes `authenticate`); `evaluates` for a route that spends a unit. */
export function clientKeyAuth(options: { evaluates?: boolean } = {}): MiddlewareHandler<AppEnv> {
  return async function clientKeyAuthMiddleware(c, next) {
    const token = bearerToken(c.req.header("authorization")) ?? (c.req.method === "GET" ? (c.req.query("key") ?? null) : null);
    await authenticateClient(c, token, options.evaluates);
    await withUnitSettled(c, next);
  };
}

const ALLOWED_HEADERS = "authorization, content-type, if-none-match, x-environment";
const EXPOSED_HEADERS = "etag, retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset";

/**
 * CORS for browsers: a preflight (OPTIONS) is answered at once from any origin (it carries no
 * credential, so it is counted nowhere); every other answer, errors included, names the caller's
 * origin. Whether that origin may use a key is the key's `allowed_origins` (authenticateClient).
 */
export function clientCors(): MiddlewareHandler<AppEnv> {
  return async function clientCorsMiddleware(c, next) {
    const origin = c.req.header("origin");
    if (c.req.method === "OPTIONS") {
      return c.body(null, 204, {
        "access-control-allow-origin": origin ?? "*",
        "access-control-allow-methods": "GET, POST, OPTIONS",
        "access-control-allow-headers": ALLOWED_HEADERS,
        "access-control-max-age": "86400",
        vary: "Origin",
      });
    }
    c.header("access-control-allow-origin", origin ?? "*");
    c.header("access-control-expose-headers", EXPOSED_HEADERS);
    c.header("vary", "Origin");
    await next();
  };
}
