// Authentication of team API keys and the operator token, and scope checks. Keys are looked up by
// their SHA-256 hash; the plaintext is never stored. Requests without a valid credential are
// counted in the per-IP fallback bucket before they are refused.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { getDb } from "../db/client";
import { apiKeys, teams, type MailKeyPolicy } from "../db/schema";
import { and, eq, isNull } from "drizzle-orm";
import { ApiError } from "./errors";
import { sha256Hex, timingSafeEqual } from "./crypto";
import { hasScope, type Scope } from "./scopes";
import { clientIp, enforceBucket } from "./rate-limit/middleware";

/** The caller behind a team API key. */
export interface Principal {
  teamId: string;
  keyId: string;
  plan: string;
  ownerEmail: string | null;
  scopes: string[];
  mail: MailKeyPolicy;
}

/** The bearer token of a request, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/** Resolves a plaintext API key to its principal; null when unknown or revoked. */
export async function loadPrincipal(d1: D1Database, key: string): Promise<Principal | null> {
  const hash = await sha256Hex(key);
  const rows = await getDb(d1)
    .select({
      keyId: apiKeys.id,
      teamId: apiKeys.teamId,
      scopes: apiKeys.scopes,
      mail: apiKeys.mail,
      plan: teams.plan,
      ownerEmail: teams.ownerEmail,
    })
    .from(apiKeys)
    .innerJoin(teams, eq(teams.id, apiKeys.teamId))
    .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
    .limit(1);
  return rows[0] ?? null;
}

/**
 * Team API key authentication plus the `default` bucket of the caller's team.
 * Missing or invalid key: the per-IP fallback bucket (100/60 s) is counted, then 401.
 */
export function auth(): MiddlewareHandler<AppEnv> {
  return async function authMiddleware(c, next) {
    // Mounted routers may both name auth(): the first one authenticates and counts the request.
    if (c.get("principal")) return next();
    const token = bearerToken(c.req.header("authorization"));
    const principal = token ? await loadPrincipal(c.env.DB, token) : null;
    if (!principal) {
      await enforceBucket(c, "anonymous", `ip:${clientIp(c)}`);
      throw ApiError.unauthorized();
    }
    c.set("principal", principal);
    await enforceBucket(c, "default", `team:${principal.teamId}`, principal.plan);
    await next();
  };
}

/** Refuses with 403 `Insufficient scope` unless the key holds `scope` (or a scope implying it). */
export function requireScope(scope: Scope): MiddlewareHandler<AppEnv> {
  return async function requireScopeMiddleware(c, next) {
    if (!hasScope(c.get("principal").scopes, scope)) throw ApiError.forbidden();
    await next();
  };
}

/** Refuses with 403 unless the key holds at least one of `scopes`. */
export function requireAnyScope(...scopes: Scope[]): MiddlewareHandler<AppEnv> {
  return async function requireAnyScopeMiddleware(c, next) {
    const held = c.get("principal").scopes;
    if (!scopes.some((scope) => hasScope(held, scope))) throw ApiError.forbidden();
    await next();
  };
}

/** Operator API authentication: `Authorization: Bearer <ADMIN_TOKEN>`. */
export function adminAuth(): MiddlewareHandler<AppEnv> {
  return async function adminAuthMiddleware(c, next) {
    const token = bearerToken(c.req.header("authorization"));
    const expected = c.env.ADMIN_TOKEN;
    if (!token || !expected || !timingSafeEqual(token, expected)) {
      await enforceBucket(c, "anonymous", `ip:${clientIp(c)}`);
      throw new ApiError("unauthorized", "Invalid or missing admin token");
    }
    await next();
  };
}
