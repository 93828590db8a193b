// One router factory for every product: an OpenAPIHono whose validation hook throws the platform's
// ApiError, and which carries the product's error body shape. The app mounts each product router
// from one table (src/app.ts) and puts the router's shape into the request context before any
// middleware can fail, so the root error handler renders every error in the right shape: no path
// strings in the products, no registry filled by side effects of imports.
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Hono, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError, zodDetails, type ErrorFormatter } from "./errors";

declare module "hono" {
  interface ContextVariableMap {
    /** The error body shape of the product that serves the request (unset: the platform's default). */
    errorFormat?: ErrorFormatter;
  }
}

const formats = new WeakMap<Hono<AppEnv>, ErrorFormatter>();

/**
 * A product router; its routes land in the generated OpenAPI document. `errorFormat` is the
 * product's error body (omit it for the platform's default shape, or for a router mounted inside
 * another product's router, whose shape it shares).
 */
export function createRouter(options: { errorFormat?: ErrorFormatter } = {}): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw ApiError.validation(zodDetails(result.error));
    },
  });
  if (options.errorFormat) formats.set(router, options.errorFormat);
  return router;
}

/** Where each router is mounted (path prefix, no trailing slash; "" for the root). */
export type Mounts = ReadonlyArray<readonly [prefix: string, router: Hono<AppEnv>]>;

/**
 * Root middleware: sets the error format of the mounted router that serves the request (the
 * longest matching prefix among the routers that declare one), first thing, so that errors thrown
 * before the router's own middleware (body limits, idempotency keys) take the product's shape too.
 */
export function productErrorFormats(mounts: Mounts): MiddlewareHandler<AppEnv> {
  const withFormat = mounts
    .filter(([, router]) => formats.has(router))
    .map(([prefix, router]) => ({ prefix, format: formats.get(router)! }))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  return async function errorFormatMiddleware(c, next) {
    const path = c.req.path;
    const match = withFormat.find(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`));
    if (match) c.set("errorFormat", match.format);
    await next();
  };
}

/** Security requirement for routes authenticated with a team API key. */
export const bearerSecurity = [{ bearerAuth: [] }];

/**
 * Security requirement of public routes: an explicit empty list, so the document states "no
 * credential" instead of leaving it unsaid (client generators and linters read a missing
 * `security` as "unknown").
 */
export const publicSecurity: Array<Record<string, string[]>> = [];
