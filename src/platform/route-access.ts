// What a route needs before its handler runs, declared once beside the route (productRoutes in
// platform/openapi.ts) and turned here into its middleware, always in the same order:
//   body limit → credential → the product's guards → scope → idempotency → strict bucket → the route's own.
// The body limit comes first, so an oversized body is refused (413 in the product's shape) before
// any credential is looked up or counted, whoever sends it; a route that reads its body itself
// (`body: { own: N }`) gets none here and its handler reads at most N bytes (platform/body.ts).
// A team API key route declares its `scope` (auth() counts the default bucket and, for a key
// holding the scope, the route's `strict` family in one meter call); a public route its per-IP
// bucket; the operator API and log ingest their own credential. Idempotency runs after the scope
// check, so a replay never answers a caller the route would refuse (docs/ARCHITECTURE.md "Replays never
// outrank authority"). The OpenAPI document's security, its 413 entries and the Idempotency-Key
// parameter come from the same declaration (openapi.ts, idempotency.ts).
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { auth, requireAnyScope } from "./auth";
import { JSON_BODY_LIMIT, limitBody, type BodyLimit } from "./body";
import { ApiError } from "./errors";
import { HASHED_BODY_LIMIT, idempotent } from "./idempotency";
import type { BucketName, StrictFamily } from "./rate-limit/buckets";
import { rateLimit } from "./rate-limit/middleware";
import type { Scope } from "./scopes";

/** What one route declares it needs. */
export interface RouteNeeds {
  /**
   * The scope a team API key must hold; a list: any one of them. A bearer product's route that
   * names none serves no key (403): a forgotten scope fails closed.
   */
  scope?: Scope | readonly Scope[];
  /** A POST that creates work: honours `Idempotency-Key` (platform/idempotency.ts). */
  idempotent?: boolean;
  /** The route's family of the `strict` bucket, counted per team after `default`. */
  strict?: StrictFamily;
  /** GET /usage: the team's usage is read in the meter call that counts the request. */
  readsUsage?: boolean;
  /**
   * The body limit: a number is the JSON limit in bytes (default: the product's, else 1 MB), checked
   * first; `{ own: N }` says the handler reads its body itself with a capped reader of N bytes and
   * its own error, so no limit is attached (log ingest, mail send, relay ingest).
   */
  body?: BodyLimit;
}

/** A per-IP bucket a public route is counted in before anything else runs. */
export type PublicBucket = Exclude<BucketName, "default" | "strict" | "flags_client">;

/** What a product declares for all its routes. */
export interface ProductAccess {
  /** `"bearer"`: a team API key; `"public"`: no credential; or a credential of its own (`authenticate`). */
  kind: "bearer" | "public" | "own";
  /** Public routes: the per-IP bucket each request is counted in first (none: the route counts itself). */
  bucket?: PublicBucket;
  /** Routes with a credential of their own: the middleware that checks it (the operator token, an ingest token); none refuses every request. */
  authenticate?: MiddlewareHandler<AppEnv>;
  /**
   * Bearer routes: checks that run after authentication and before the scope check (audit: the
   * org in the path is the caller's team, bodies are JSON). They may answer or do I/O, so the
   * strict family is then counted by its own middleware, never ahead for a request they refuse.
   */
  guards?: MiddlewareHandler<AppEnv>[];
  /** The JSON body limit of the product's routes that declare none, and of its unserved paths (default 1 MB). */
  body?: number;
}

/** The limit a route's body is read to: its own, else its product's, else 1 MB. */
export function bodyLimitOf(product: Pick<ProductAccess, "body">, needs: Pick<RouteNeeds, "body">): BodyLimit {
  return needs.body ?? product.body ?? JSON_BODY_LIMIT;
}

/** The middleware of a route, in the platform's one order, from the product's and the route's declarations. */
export function routeMiddleware(product: ProductAccess, needs: RouteNeeds, own: MiddlewareHandler<AppEnv>[] = []): MiddlewareHandler<AppEnv>[] {
  const chain: MiddlewareHandler<AppEnv>[] = [];
  const body = bodyLimitOf(product, needs);
  if (typeof body === "number") chain.push(limitBody(body));
  if (product.kind === "bearer") {
    const scopes: Scope[] = needs.scope === undefined ? [] : typeof needs.scope === "string" ? [needs.scope] : [...needs.scope];
    const guards = product.guards ?? [];
    chain.push(auth({ readsUsage: needs.readsUsage, scopes, strict: guards.length === 0 ? needs.strict : undefined }), ...guards, requireAnyScope(...scopes));
  } else {
    if (needs.scope || needs.readsUsage) throw new Error("Only routes authenticated with a team API key declare a scope");
    if (product.kind === "public" && product.bucket) chain.push(rateLimit({ bucket: product.bucket }));
    // A scheme of its own without its check fails closed: nothing is served.
    if (product.kind === "own") chain.push(product.authenticate ?? refuseAll);
  }
  if (needs.idempotent) {
    if (product.kind !== "bearer") throw new Error("Idempotency keys are scoped to a team: only team API key routes declare them");
    // A body past the hashed size passes the idempotency check unclaimed (idempotency.ts).
    if ((typeof body === "number" ? body : body.own) > HASHED_BODY_LIMIT) throw new Error("An idempotent route reads at most HASHED_BODY_LIMIT bytes");
    chain.push(idempotent());
  }
  if (needs.strict) chain.push(rateLimit({ bucket: "strict", family: needs.strict }));
  return [...chain, ...own];
}

/**
 * What a path under a product's prefix that none of its routes serves runs before the platform's
 * 404 or 405 (registered after the product's routes, so a served path never reaches it): the
 * product's body limit and credential check (and guards, and `scopes` for a product whose routes
 * all share them), as before a route of the product, so an unknown path is refused, counted and
 * shaped like a known one (413 for an oversized body; 401 without a credential; a counted 404 with
 * the rate-limit headers with one).
 */
export function unmatchedMiddleware(product: ProductAccess, scopes: Scope[]): MiddlewareHandler<AppEnv>[] {
  const limit = limitBody(product.body ?? JSON_BODY_LIMIT);
  if (product.kind === "bearer") return [limit, auth(), ...(product.guards ?? []), ...(scopes.length > 0 ? [requireAnyScope(...scopes)] : [])];
  if (product.kind === "own") return [limit, product.authenticate ?? refuseAll];
  return product.bucket ? [limit, rateLimit({ bucket: product.bucket })] : [limit];
}

const refuseAll: MiddlewareHandler<AppEnv> = async function refuseAll() {
  throw ApiError.unauthorized();
};
