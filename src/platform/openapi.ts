// Small helpers for route declarations, so every product describes bodies the same way, and the
// route helper that gives every route of a product its tags, security, shared error responses and
// middleware: one declaration per route says what it needs (scope, idempotency, strict family, body
// limit), and its body limit, authentication, scope check, idempotency and buckets follow from it
// (route-access.ts), as do its document's security and 413 entry.
import { createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import type { Scope } from "./scopes";
import { tooLargeMessage } from "./body";
import { idempotentOperation } from "./idempotency";
import { bodyLimitOf, routeMiddleware, unmatchedMiddleware, type ProductAccess, type PublicBucket, type RouteNeeds } from "./route-access";

/** `{ "application/json": { schema } }` */
export function jsonContent<T extends z.ZodType>(schema: T) {
  return { "application/json": { schema } };
}

/**
 * A required JSON request body; `example` is the body the reference shows and sends, which must
 * succeed as sent with `npm start`'s demo key (test/platform/request-examples.test.ts sends each).
 */
export function jsonBody<T extends z.ZodType>(schema: T, example?: z.input<T>) {
  return { required: true, content: { "application/json": example === undefined ? { schema } : { schema, example } } };
}

/** The `{data: ...}` envelope of a schema. */
export function dataOf<T extends z.ZodType>(schema: T) {
  return z.object({ data: schema });
}

/** A JSON response in the `{data: ...}` envelope. */
export function dataResponse<T extends z.ZodType>(description: string, schema: T) {
  return { description, content: jsonContent(dataOf(schema)) };
}

/** A JSON response with a given schema, no envelope. */
export function jsonResponse<T extends z.ZodType>(description: string, schema: T) {
  return { description, content: jsonContent(schema) };
}

/** The auth error body of the specification (401, 403). */
export const AuthErrorSchema = z.object({ error: z.string() }).openapi("AuthError");

/** The rate-limit error body of the specification (429). */
export const RateLimitErrorSchema = z.object({ error: z.literal("Rate limit exceeded"), retry_after: z.number().int() }).openapi("RateLimitError");

/** 401, 403 and 429 responses shared by every authenticated route. */
export const authResponses = {
  401: jsonResponse("Invalid or missing API key", AuthErrorSchema),
  403: jsonResponse("Insufficient scope", AuthErrorSchema),
  429: jsonResponse("Rate limit exceeded (or monthly quota)", RateLimitErrorSchema),
};

/**
 * Path parameters routed and documented under `name` but handed to the handler as `key`.
 * OpenAPI forbids two path templates that differ only in a parameter's name (the authenticated
 * `GET /surveys/{id}/responses` and the public `POST /surveys/{slug}/responses`): both
 * operations declare the one shared name, each with its own description, while their handlers
 * keep reading `id` and `slug`. The URL itself is unchanged (any single path segment).
 */
export function pathParamAs<N extends string, K extends string>(name: N, key: K, description: string) {
  const shape = { [name]: z.string().openapi({ param: { name, in: "path", description } }) } as { [P in N]: z.ZodString };
  return z.object(shape).transform((params) => ({ [key]: (params as Record<string, string>)[name] }) as { [P in K]: string });
}

/** Response entries of a route, by status. */
type Responses = RouteConfig["responses"];

/** `B` with `A`'s entries added where `B` has none: the route's own entries win. */
type Merged<A, B> = Omit<A, keyof B> & B;

/** The shared error responses of a product: the auth trio for bearer routes under the product's own entries. */
type SharedResponses<S, E> = S extends "bearer" ? Merged<typeof authResponses, E> : E;

/** What a route declares it needs: only a bearer product's routes name a scope (one that names none serves no key). */
type NeedsOf<S> = S extends "bearer" ? RouteNeeds : Omit<RouteNeeds, "scope" | "readsUsage" | "idempotent">;

/**
 * A route's own declaration: everything except what the product declares for all its routes, plus
 * what it needs; `middleware` is only the route's own, run after everything its needs attach.
 */
type OwnRouteConfig<P extends string, S> = Omit<RouteConfig, "path" | "tags" | "security" | "middleware"> & {
  path: P;
  middleware?: MiddlewareHandler<AppEnv>[];
} & NeedsOf<S>;

/** A security requirement list of OpenAPI (`[{ scheme: [scopes] }]`). */
export type SecurityRequirements = Array<Record<string, string[]>>;

/** Security requirement for routes authenticated with a team API key (a route's scopes replace the empty list). */
const bearerSecurity: SecurityRequirements = [{ bearerAuth: [] }];

/**
 * Security requirement of public routes: an explicit empty list, so the document states "no
 * credential" instead of leaving it unsaid (client generators and linters read a missing
 * `security` as "unknown").
 */
const publicSecurity: SecurityRequirements = [];

export interface ProductRouteOptions<S, E extends Responses> {
  /** The document's tags of every route (its section in the reference). */
  tags: string[];
  /**
   * `"bearer"`: a team API key; adds the platform's 401/403/429 responses (`errors` can restate any
   * of them in the product's own shape), and each route names its scope. `"public"`: no credential,
   * stated as an empty list. Or the requirement list of another scheme (the operator's token, a
   * log project's ingest token), checked by `authenticate`.
   */
  security: S;
  /** Error responses every route of the product can answer, in the product's error shape. */
  errors?: E;
  /** Public routes: the per-IP bucket each request counts in before anything runs. */
  bucket?: PublicBucket;
  /** Routes with a scheme of their own: the middleware that checks its credential. */
  authenticate?: S extends "bearer" | "public" ? never : MiddlewareHandler<AppEnv>;
  /** Bearer routes: checks run after authentication, before the scope check (route-access.ts). */
  guards?: MiddlewareHandler<AppEnv>[];
  /** The JSON body limit of every route that declares none (default 1 MB), in bytes. */
  body?: number;
  /**
   * The product's plain error body (`{error}` in most products): the schema of the 413 entry each
   * route with a JSON body and a JSON limit gets in the document, described from its declared limit
   * (`Payload too large (max 1MB)`). The body itself is rendered by the router's error format.
   */
  errorBody?: z.ZodType;
}

const NEEDS = ["scope", "idempotent", "strict", "readsUsage", "body"] as const;

/**
 * The `createRoute` of one product: each route declares only what is its own (method, path,
 * operationId, texts, what it needs, request, its own responses) and gets the product's tags,
 * security requirement, shared error responses and its middleware in the platform's order
 * (route-access.ts); a route's own response for a status replaces the shared one. A route with a
 * JSON body documents the 413 of its declared limit in the product's `errorBody`. An idempotent
 * route's document names the Idempotency-Key header, the replay header and the 409. The result is
 * what `createRoute` returns for the merged config, so `c.req.valid(...)` and the typed responses
 * of the handler are inferred exactly as with `createRoute` itself.
 */
export function productRoutes<const S extends "bearer" | "public" | SecurityRequirements, E extends Responses = {}>(options: ProductRouteOptions<S, E>) {
  const security = options.security === "bearer" ? bearerSecurity : options.security === "public" ? publicSecurity : (options.security as SecurityRequirements);
  const shared = { ...(options.security === "bearer" ? authResponses : {}), ...options.errors } as SharedResponses<S, E>;
  const tags = options.tags;
  const access: ProductAccess = {
    kind: options.security === "bearer" ? "bearer" : options.security === "public" ? "public" : "own",
    bucket: options.bucket,
    authenticate: options.authenticate,
    guards: options.guards,
    body: options.body,
  };
  function route<P extends string, R extends OwnRouteConfig<P, S>>(config: R) {
    type Config = Omit<R, "responses" | "middleware" | (typeof NEEDS)[number]> & {
      tags: string[];
      security: SecurityRequirements;
      middleware: MiddlewareHandler<AppEnv>[];
      responses: Merged<SharedResponses<S, E>, R["responses"]>;
    };
    const own: Record<string, unknown> = { ...config };
    for (const need of NEEDS) delete own[need];
    const needs = config as RouteNeeds;
    const middleware = routeMiddleware(access, needs, config.middleware);
    const responses: Responses = { ...shared, ...config.responses };
    // The 413 of a declared JSON limit, where the route takes a body and does not state its own.
    const limit = bodyLimitOf(access, needs);
    if (typeof limit === "number" && config.request?.body && options.errorBody && !responses[413]) {
      responses[413] = jsonResponse(tooLargeMessage(limit), options.errorBody);
    }
    const documented = needs.idempotent ? idempotentOperation(responses) : { responses };
    // A bearer route's requirement names its scope: one requirement per accepted scope (any one
    // suffices, which OpenAPI says with alternative requirement objects), so the document, the
    // middleware and the security tests read the same declaration.
    const scopes = needs.scope === undefined ? [] : typeof needs.scope === "string" ? [needs.scope] : [...needs.scope];
    const documentedSecurity = options.security === "bearer" && scopes.length > 0 ? scopes.map((scope) => ({ bearerAuth: [scope] })) : security;
    const merged = { ...own, tags, security: documentedSecurity, middleware, ...documented } as unknown as Config;
    return createRoute<P, Config>(merged);
  }
  /**
   * The middleware of the product's paths that no route serves, for `router.use("*", ...)` after
   * its routes (route-access.ts unmatchedMiddleware); `scopes`: those every route of the product accepts.
   */
  const unmatched = (...scopes: Scope[]) => unmatchedMiddleware(access, scopes);
  return Object.assign(route, { unmatched });
}
