// One router factory for every product: an OpenAPIHono whose validation hook throws the platform's
// ApiError, and which carries the product's error body shape. The app mounts each product router
// from one table (src/app.ts) and puts the router's shape into the request context before any
// middleware can fail, so the root error handler renders every error in the right shape: no path
// strings in the products, no registry filled by side effects of imports. It also answers which
// methods a path is served with (servedMethods), for the root's 405, and installs zod's messages
// for people (zod-messages.ts) before any schema parses.
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Hono, MiddlewareHandler } from "hono";
import { TrieRouter } from "hono/router/trie-router";
import type { AppEnv } from "../env";
import { ApiError, zodDetails, type ErrorFormatter } from "./errors";
import "./zod-messages";

declare module "hono" {
  interface ContextVariableMap {
    /** The error body shape of the product that serves the request (unset: the platform's default). */
    errorFormat?: ErrorFormatter;
    /** True when a known path asked with another method answers 404, not 405 (mail's statuses). */
    wrongMethodIsNotFound?: boolean;
  }
}

/** What a router declares about itself for the root middleware. */
interface RouterTraits {
  errorFormat?: ErrorFormatter;
  /**
   * A known path asked with a method it does not serve answers 404 instead of 405 with `Allow`:
   * for mail, whose specified statuses do not include 405.
   */
  wrongMethodIsNotFound?: boolean;
}

const traits = new WeakMap<Hono<AppEnv>, RouterTraits>();

/**
 * A product router; its routes land in the generated OpenAPI document. `errorFormat` is the
 * product's error body (omit it for the platform's default shape, or for a router mounted inside
 * another product's router, whose shape it shares). Body limits are not a router's: each route
 * declares its own (platform/route-access.ts).
 */
export function createRouter(options: RouterTraits = {}): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw ApiError.validation(zodDetails(result.error));
    },
  });
  if (options.errorFormat || options.wrongMethodIsNotFound) traits.set(router, options);
  return router;
}

/** Where each router is mounted (path prefix, no trailing slash; "" for the root). */
export type Mounts = ReadonlyArray<readonly [prefix: string, router: Hono<AppEnv>]>;

/**
 * Root middleware: puts what the mounted router serving the request declares (the longest matching
 * prefix among the routers that declare anything) into the context, first thing, so that every
 * error from then on (the secrets check, a route's body limit or credential, an unknown path's 404
 * or 405) renders in the product's shape.
 */
export function productContext(mounts: Mounts): MiddlewareHandler<AppEnv> {
  const declared = mounts
    .filter(([, router]) => traits.has(router))
    .map(([prefix, router]) => ({ prefix, traits: traits.get(router)! }))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  return async function productContextMiddleware(c, next) {
    const path = c.req.path;
    const match = declared.find(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`));
    if (match?.traits.errorFormat) c.set("errorFormat", match.traits.errorFormat);
    if (match?.traits.wrongMethodIsNotFound) c.set("wrongMethodIsNotFound", true);
    await next();
  };
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/**
 * The methods an app serves on a path, from its route table (middleware, registered for every
 * method, does not count): `["GET", "HEAD", "POST"]`, or none for an unknown path. Built once, on
 * the first call, when every router is mounted. The root's 404 handler asks it, so a known path
 * with a wrong method answers 405 with `Allow` instead of "Not found".
 */
export function servedMethods(app: Hono<AppEnv>): (path: string) => string[] {
  let router: TrieRouter<string> | undefined;
  return (path) => {
    if (!router) {
      router = new TrieRouter<string>();
      for (const { method, path: pattern } of app.routes) if (method !== "ALL") router.add(method, pattern, method);
    }
    const served: string[] = [];
    for (const method of METHODS) {
      if (router.match(method, path)[0].length === 0) continue;
      served.push(method);
      if (method === "GET") served.push("HEAD");
    }
    return served;
  };
}
