// Authentication of team API keys and the operator token, and scope checks. Keys are looked up by
// their SHA-256 hash; the plaintext is never stored. Requests without a valid credential are
// counted in the per-IP fallback bucket before they are refused.
//
// The hot path: an isolate resolves a key once and keeps the principal for KEY_CACHE_TTL_MS
// (bounded in entries), so an authenticated request costs one call to its team's meter (its
// rate-limit buckets, all in one RPC, shared with the team's other requests in flight on this
// isolate) before the route, and no D1 read. Changes made through this isolate
// (key revoked or edited, team plan changed, key suspended) drop the entries at once
// (`forgetKey`, `forgetTeam`); other isolates see them within KEY_CACHE_TTL_MS.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { getDb } from "../db/client";
import { apiKeys, teams, type MailKeyPolicy } from "../db/schema";
import { and, eq, inArray, isNull } from "drizzle-orm";
import { forgetTeamEverywhere, IsolateCache } from "./isolate-cache";
import { ApiError } from "./errors";
import { sha256Hex, timingSafeEqual } from "./crypto";
import { hasScope, type Scope } from "./scopes";
import { ipKey, enforceBucket, enforceTeamBuckets, refuseRememberedTeam } from "./rate-limit/middleware";
import type { StrictFamily } from "./rate-limit/buckets";

/** The caller behind a team API key. Shared by the requests of an isolate: never mutate it. */
export interface Principal {
  teamId: string;
  keyId: string;
  /** The key's visible prefix (the request log shows it). */
  keyPrefix: string;
  plan: string;
  ownerEmail: string | null;
  scopes: string[];
  mail: MailKeyPolicy;
}

/** How long an isolate trusts a key it resolved: the bound for a change made elsewhere to apply. */
export const KEY_CACHE_TTL_MS = 10_000;
/** Resolved keys kept per isolate; the oldest goes first. */
export const KEY_CACHE_MAX = 5_000;
/**
 * Unknown or revoked keys are remembered for a shorter time, in their own smaller map: a client
 * stuck on a revoked key then costs no D1 read per retry, and random keys sent by an attacker
 * (never repeated, so never served from it) can only churn this map, never evict a valid key.
 */
export const UNKNOWN_KEY_TTL_MS = 5_000;
export const UNKNOWN_KEY_MAX = 1_000;

/**
 * The shape of every key the platform issues (`edp_` and 32 random bytes in base64url, see
 * createKey in admin.service.ts): anything else is refused without hashing or a D1 read.
 */
const KEY_FORMAT = /^edp_[A-Za-z0-9_-]{43}$/;

/** Whether `token` has the shape of an issued API key. */
export function isWellFormedKey(token: string): boolean {
  return KEY_FORMAT.test(token);
}

/** The bearer token of a request, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/** Resolves a plaintext API key to its principal from D1; null when unknown or revoked. */
export async function loadPrincipal(d1: D1Database, key: string): Promise<Principal | null> {
  const hash = await sha256Hex(key);
  const rows = await getDb(d1)
    .select({
      keyId: apiKeys.id,
      keyPrefix: apiKeys.prefix,
      teamId: apiKeys.teamId,
      scopes: apiKeys.scopes,
      mail: apiKeys.mail,
      plan: teams.plan,
      ownerEmail: teams.ownerEmail,
      sandboxSuspendedAt: teams.sandboxSuspendedAt,
    })
    .from(apiKeys)
    .innerJoin(teams, eq(teams.id, apiKeys.teamId))
    .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
    .limit(1);
  const row = rows[0];
  if (!row) return null;
  const { sandboxSuspendedAt, ...principal } = row;
  // A sandbox key is held by its team's sandbox suspension whatever its own flag says.
  if (sandboxSuspendedAt !== null && row.mail.sandbox && !row.mail.suspended) return { ...principal, mail: { ...row.mail, suspended: true } };
  return principal;
}

interface KeyCache {
  /** By plaintext key: a Map look-up needs no hashing. */
  known: IsolateCache<Principal>;
  unknown: IsolateCache<true>;
}

/** One cache per D1 binding (tests may pass other bindings; production has one). */
const caches = new WeakMap<D1Database, KeyCache>();
/** Every cache, for the forget functions, which have no binding at hand. */
const allCaches = new Set<KeyCache>();

function cacheFor(d1: D1Database): KeyCache {
  let cache = caches.get(d1);
  if (!cache) {
    cache = {
      known: new IsolateCache<Principal>({ ttlMs: KEY_CACHE_TTL_MS, max: KEY_CACHE_MAX, teamOf: (principal) => principal.teamId }),
      unknown: new IsolateCache<true>({ ttlMs: UNKNOWN_KEY_TTL_MS, max: UNKNOWN_KEY_MAX }),
    };
    caches.set(d1, cache);
    allCaches.add(cache);
  }
  return cache;
}

/**
 * Resolves a plaintext API key to its principal, from this isolate's cache when it resolved the
 * key less than KEY_CACHE_TTL_MS ago, else from D1; null when malformed, unknown or revoked.
 */
export async function resolveKey(d1: D1Database, key: string): Promise<Principal | null> {
  if (!isWellFormedKey(key)) return null;
  const { known, unknown } = cacheFor(d1);
  const cached = known.get(key);
  if (cached) return cached;
  if (unknown.get(key)) return null;
  const marks = { known: known.mark(), unknown: unknown.mark() };
  const principal = await loadPrincipal(d1, key);
  if (principal) {
    unknown.delete(key);
    known.set(key, principal, marks.known);
  } else {
    known.delete(key);
    unknown.set(key, true, marks.unknown);
  }
  return principal;
}

/** A key was revoked, edited or suspended: this isolate stops using what it cached for it now. */
export function forgetKey(keyId: string): void {
  for (const cache of allCaches) cache.known.forget((principal) => principal.keyId === keyId);
}

/** A team's plan or owner changed: this isolate re-reads each of its keys (and whatever else it caches of the team) on next use. */
export function forgetTeam(teamId: string): void {
  forgetTeamEverywhere(teamId);
}

/** A key was created: nothing this isolate remembers as unknown may refuse it. */
export function forgetUnknownKeys(): void {
  for (const cache of allCaches) cache.unknown.clear();
}

/** Entries held per map, for the tests of the bounds. */
export function keyCacheSizes(d1: D1Database): { known: number; unknown: number } {
  const cache = cacheFor(d1);
  return { known: cache.known.size, unknown: cache.unknown.size };
}

/** What a route tells auth() about itself (platform/route-access.ts builds it from its declaration). */
export interface AuthOptions {
  /** GET /usage: the team's usage is read in the same meter call (`c.get("usageRead")`). */
  readsUsage?: boolean;
  /**
   * The strict family of the route, counted in the same meter call as the default bucket when the
   * key holds one of `scopes` (a key the scope check refuses is never counted in it); its
   * middleware, further down, takes the result from the context.
   */
  strict?: StrictFamily;
  scopes?: readonly Scope[];
}

/**
 * Team API key authentication plus the `default` bucket of the caller's team, counted in the same
 * Durable Object call as the route's strict family, if any. `readsUsage` (GET /usage): the team's
 * usage is read in that call too, for the route to take from `c.get("usageRead")`.
 * Missing or invalid key: the per-IP fallback bucket (100/60 s) is counted, then 401.
 */
export function auth(options: AuthOptions = {}): MiddlewareHandler<AppEnv> {
  const readsUsage = options.readsUsage === true;
  const { strict, scopes } = options;
  return async function authMiddleware(c, next) {
    // Authenticated already (a router mounted inside another naming auth() too): counted once.
    if (c.get("principal")) return next();
    const token = bearerToken(c.req.header("authorization"));
    const principal = token ? await resolveKey(c.env.DB, token) : null;
    if (!principal) {
      await enforceBucket(c, "anonymous", ipKey(c));
      throw ApiError.unauthorized();
    }
    c.set("principal", principal);
    const families = strict && (!scopes || holdsAny(principal.scopes, scopes)) ? [strict] : [];
    if (families.length > 0 || !SAFE_METHODS.has(c.req.method)) {
      await enforceTeamBuckets(c, principal.teamId, principal.plan, families, readsUsage);
      await next();
      return;
    }
    // A read (GET/HEAD: no side effects) counted in the default bucket only: the route runs while
    // the counter is asked, so the request waits for the slower of the two instead of both in a
    // row. A refusal still wins: the route's answer is dropped (its body cancelled) for the same
    // 429. Only reads in flight when a window fills do work that is then refused; after that the
    // limiter refuses from memory before anything runs (DurableObjectLimiter), so a flood over
    // the limit does no route work.
    refuseRememberedTeam(c, principal.teamId, principal.plan);
    const counting = enforceTeamBuckets(c, principal.teamId, principal.plan, families, readsUsage).then(
      () => null,
      (error: unknown) => error,
    );
    await next();
    const refused = await counting;
    if (refused !== null) {
      await c.res.body?.cancel().catch(() => undefined);
      throw refused;
    }
  };
}

const holdsAny = (held: readonly string[], scopes: readonly Scope[]) => scopes.some((scope) => hasScope(held, scope));

/** Refuses with 403 `Insufficient scope` unless the key holds `scope` (or a scope implying it). */
export function requireScope(scope: Scope): MiddlewareHandler<AppEnv> {
  return requireAnyScope(scope);
}

/** Refuses with 403 unless the key holds at least one of `scopes`. */
export function requireAnyScope(...scopes: Scope[]): MiddlewareHandler<AppEnv> {
  return async function requireScopeMiddleware(c, next) {
    if (!holdsAny(c.get("principal").scopes, scopes)) throw ApiError.forbidden();
    await next();
  };
}

/** Methods that read only (RFC 9110 safe methods): their route may run while the request is counted. */
const SAFE_METHODS = new Set(["GET", "HEAD"]);

/**
 * Which of `keyIds` are unrevoked keys holding `scope`, read from D1 (never from an isolate's
 * cache): for what stays open past its request and must end with its credential (a live tail).
 */
export async function keysHoldingScope(d1: D1Database, keyIds: string[], scope: Scope): Promise<Set<string>> {
  if (keyIds.length === 0) return new Set();
  const rows = await getDb(d1)
    .select({ id: apiKeys.id, scopes: apiKeys.scopes })
    .from(apiKeys)
    .where(and(inArray(apiKeys.id, keyIds), isNull(apiKeys.revokedAt)));
  return new Set(rows.filter((row) => hasScope(row.scopes, scope)).map((row) => row.id));
}

/** Operator API authentication: `Authorization: Bearer <ADMIN_TOKEN>`. */
export function adminAuth(): MiddlewareHandler<AppEnv> {
  return async function adminAuthMiddleware(c, next) {
    const token = bearerToken(c.req.header("authorization"));
    const expected = c.env.ADMIN_TOKEN;
    if (!token || !expected || !timingSafeEqual(token, expected)) {
      await enforceBucket(c, "anonymous", ipKey(c));
      throw new ApiError("unauthorized", "Invalid or missing admin token");
    }
    await next();
  };
}
