// Builds the Hono app: request context, the request log, error rendering and 404, the operator
// API, usage, the request log's reads, the team's keys, every product of the list (src/products),
// the generated OpenAPI document, the interactive reference and the API root's index of them, the
// favicon, the console under /console and the landing page
// at /. Body limits are the routes' own (declared with each route); the root keeps the default
// only for requests no route answers, before their 404 or 405.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./env";
import { ApiError } from "./platform/errors";
import { handleError } from "./platform/handle-error";
import { JSON_BODY_LIMIT, limitBody } from "./platform/body";
import { requestContext } from "./platform/request-context";
import { requireSecrets } from "./platform/config";
import { createRouter, productContext, servedMethods, type Mounts } from "./platform/router";
import type { ProductDefinition } from "./platform/products";
import { PRODUCTS } from "./products";
import { requestLog } from "./platform/request-log/request-log";
import { requestLogRouter } from "./platform/request-log/request-log.routes";
import { createAdminRouter } from "./platform/admin/admin.routes";
import { usageRouter } from "./platform/usage/usage.routes";
import { createConsoleRouter, landingRouter } from "./console/console.routes";
import { createKeysRouter } from "./platform/keys/keys.routes";
import { ipKey, enforceBucket } from "./platform/rate-limit/middleware";
import { registerIdempotencyComponents } from "./platform/idempotency";
import { documentTags, referencePage } from "./platform/reference-page";
import { faviconResponse } from "./platform/favicon";

export const API_PREFIX = "/api/v1";

/** Path segments of a mount prefix: more is more specific ("" has none). */
const depth = (prefix: string) => (prefix === "" ? 0 : prefix.split("/").length);

/**
 * Every router and where it is mounted, in mount order (Hono matches in that order): the
 * platform's API, then the products' routers most specific prefix first (list order among equals:
 * a router at /api/v1/webhooks/sources answers before one at /api/v1/webhooks, /api/v1/logs/ingest
 * before /api/v1/logs, the root last), then the console and the landing page. The table also gives
 * each request its product's error shape (platform/router.ts), so the mount prefix is the only
 * place a product's path is written.
 */
export function mountsOf(products: readonly ProductDefinition[]): Mounts {
  const productMounts = products
    .flatMap((product) => product.mounts ?? [])
    .map((mount, index) => ({ mount, index }))
    .sort((a, b) => depth(b.mount.prefix) - depth(a.mount.prefix) || a.index - b.index)
    .map(({ mount }) => [mount.prefix, mount.router] as const);
  return [
    [`${API_PREFIX}/admin`, createAdminRouter(products)],
    [`${API_PREFIX}/usage`, usageRouter],
    [`${API_PREFIX}/requests`, requestLogRouter],
    [`${API_PREFIX}/keys`, createKeysRouter()],
    ...productMounts,
    // The console renders its own error pages (src/console/console.routes.tsx).
    ["/console", createConsoleRouter(products)],
    ["", landingRouter],
  ];
}

/** The app serving `products` (the registered list; a test may build one with its own). */
export function createApp(products: readonly ProductDefinition[] = PRODUCTS): OpenAPIHono<AppEnv> {
  const app = createRouter();
  const MOUNTS = mountsOf(products);

  // A bare route with no middleware: the baseline of the benchmarks, and a liveness probe.
  app.get("/health", (c) => c.json({ ok: true }));
  // The icon every page's browser asks for, from this Worker (platform/favicon.ts).
  app.get("/favicon.ico", () => faviconResponse());

  app.use("*", requestContext());
  // Requests made with a team API key go to the team's request log after they answer.
  app.use("*", requestLog());
  // The error shape and body handling of the product serving the request, before anything below can fail.
  app.use("*", productContext(MOUNTS));
  // A missing or unusable secret answers 500 naming it (in the product's shape), before any handler needs it.
  app.use("*", requireSecrets());
  // Body limits are declared by each route (platform/route-access.ts: first in its chain, before
  // its credential); the console limits its forms itself; what no route answers gets the default
  // limit registered last, below.

  for (const [prefix, router] of MOUNTS) app.route(prefix || "/", router);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "A team API key (`edp_...`), created by the operator API and shown once.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "adminToken", {
    type: "http",
    scheme: "bearer",
    description: "The operator token (ADMIN_TOKEN).",
  });
  // Named by every idempotent operation (its route declares `idempotent: true`).
  registerIdempotencyComponents(app.openAPIRegistry);

  // The reference pages are public but unauthenticated traffic is counted per IP.
  const anonymous: MiddlewareHandler<AppEnv> = async (c, next) => {
    await enforceBucket(c, "anonymous", ipKey(c));
    await next();
  };
  app.use(`${API_PREFIX}/openapi.json`, anonymous);
  app.use(`${API_PREFIX}/docs`, anonymous);
  app.use(API_PREFIX, anonymous);
  app.use(`${API_PREFIX}/`, anonymous);
  // The API root answers where to go next (the start banner links it) instead of a 404.
  const apiIndex = (c: Context<AppEnv>) => {
    const origin = new URL(c.req.url).origin;
    return c.json({
      data: {
        name: "Edge Platform API",
        version: "v1",
        links: {
          reference: `${origin}${API_PREFIX}/docs`,
          openapi: `${origin}${API_PREFIX}/openapi.json`,
          health: `${origin}/health`,
          console: `${origin}/console`,
        },
      },
    });
  };
  app.get(API_PREFIX, apiIndex);
  app.get(`${API_PREFIX}/`, apiIndex);
  // The generated document.
  app.get(`${API_PREFIX}/openapi.json`, (c) =>
    c.json(
      app.getOpenAPI31Document({
        openapi: "3.1.0",
        info: {
          title: "Edge Platform API",
          version: "1.0.0-beta",
          description:
            "Surveys, audit reports, logs, push, webhook relay and mail on Cloudflare Workers. Every product is scoped to the team that owns the API key. Error shapes and idempotent retries: docs/API.md; rate limits, quotas and retention: docs/OPERATIONS.md (in the repository).",
        },
        servers: [{ url: new URL(c.req.url).origin }],
        tags: documentTags(products),
      }),
    ),
  );
  app.get(`${API_PREFIX}/docs`, referencePage(`${API_PREFIX}/openapi.json`));

  // A request no route answers (an unknown path, or a known one asked with another method) is held
  // to the default body limit before its 404 or 405, as a served one would be: registered after
  // every route, so it runs only when none answered (a product's unserved paths check it first,
  // with their credential: route.unmatched()).
  app.use("*", limitBody(JSON_BODY_LIMIT));

  // Returned, not thrown: a thrown 404 would bypass the root middleware's headers. A known path
  // asked with another method answers 405 with the methods it serves (mail keeps its 404).
  const methodsOf = servedMethods(app);
  app.notFound((c) => {
    const allowed = c.get("wrongMethodIsNotFound") ? [] : methodsOf(c.req.path);
    if (allowed.length === 0) return handleError(ApiError.notFound(), c);
    const allow = allowed.join(", ");
    return handleError(new ApiError("method_not_allowed", `Method ${c.req.method} is not allowed here; use ${allow}`, { headers: { allow } }), c);
  });
  app.onError(handleError);
  return app;
}

export const app = createApp();
