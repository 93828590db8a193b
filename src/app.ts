// Builds the Hono app: request context, the request log, error rendering and 404, the operator
// API, usage, the request log's reads, the team's keys, every product under /api/v1, the generated
// OpenAPI document and the interactive reference, the console under /console and the landing page
// at /. Body limits are the routes' own (declared with each route); the root keeps the default
// only for requests no route answers, before their 404 or 405.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env";
import { ApiError } from "./platform/errors";
import { handleError } from "./platform/handle-error";
import { JSON_BODY_LIMIT, limitBody } from "./platform/body";
import { requestContext } from "./platform/request-context";
import { requireSecrets } from "./platform/config";
import { createRouter, productContext, servedMethods, type Mounts } from "./platform/router";
import { requestLog } from "./platform/request-log/request-log";
import { requestLogRouter } from "./platform/request-log/request-log.routes";
import { adminRouter } from "./platform/admin/admin.routes";
import { usageRouter } from "./platform/usage/usage.routes";
import { auditRouter } from "./products/audit/audit.routes";
import { auditViewerRouter } from "./products/audit/audit-viewer.routes";
import { logsIngestRouter, logsRouter } from "./products/logs/logs.routes";
import { ingestRouter, relayRouter } from "./products/relay/relay.routes";
import { emailsRouter, mailWebhooksRouter } from "./products/mail/mail.routes";
import { domainsRouter } from "./products/mail/domains.routes";
import { pushRouter } from "./products/push/push.routes";
import { surveysPublicRouter } from "./products/surveys/surveys.public.routes";
import { surveysRouter } from "./products/surveys/surveys.routes";
import { surveyPageRouter } from "./products/surveys/page/survey-page.routes";
import { consoleRouter, landingRouter } from "./console/console.routes";
import { keysRouter } from "./platform/keys/keys.routes";
import { clientIp, enforceBucket } from "./platform/rate-limit/middleware";
import { registerIdempotencyComponents } from "./platform/idempotency";
import { DOCUMENT_TAGS, referencePage } from "./platform/reference-page";
import { flagsClientRouter, flagsRouter, ofrepRouter } from "./products/flags";

export const API_PREFIX = "/api/v1";

/**
 * Every router and where it is mounted, in mount order (Hono matches in that order). The table also
 * gives each request its product's error shape (platform/router.ts), so the mount prefix is the only
 * place a product's path is written.
 */
const MOUNTS: Mounts = [
  [`${API_PREFIX}/admin`, adminRouter],
  [`${API_PREFIX}/usage`, usageRouter],
  [`${API_PREFIX}/requests`, requestLogRouter],
  [`${API_PREFIX}/keys`, keysRouter],
  [`${API_PREFIX}/orgs`, auditRouter],
  ["/insights/audit/reports", auditViewerRouter],
  [`${API_PREFIX}/logs/ingest`, logsIngestRouter],
  [`${API_PREFIX}/logs`, logsRouter],
  // Before the mail webhooks router at /webhooks: the relay owns everything under /webhooks/sources.
  [`${API_PREFIX}/webhooks/sources`, relayRouter],
  ["/in", ingestRouter],
  [`${API_PREFIX}/emails`, emailsRouter],
  [`${API_PREFIX}/domains`, domainsRouter],
  [`${API_PREFIX}/webhooks`, mailWebhooksRouter],
  [`${API_PREFIX}/push`, pushRouter],
  // Before /flags: the client API has its own credential (a client key) and buckets.
  [`${API_PREFIX}/flags/client`, flagsClientRouter],
  [`${API_PREFIX}/flags`, flagsRouter],
  ["/ofrep/v1", ofrepRouter],
  [`${API_PREFIX}/surveys`, surveysRouter],
  [`${API_PREFIX}/surveys`, surveysPublicRouter],
  ["", surveyPageRouter],
  // The console renders its own error pages (src/console/console.routes.tsx).
  ["/console", consoleRouter],
  ["", landingRouter],
];

export function createApp(): OpenAPIHono<AppEnv> {
  const app = createRouter();

  // A bare route with no middleware: the baseline of the benchmarks, and a liveness probe.
  app.get("/health", (c) => c.json({ ok: true }));

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
    await enforceBucket(c, "anonymous", `ip:${clientIp(c)}`);
    await next();
  };
  app.use(`${API_PREFIX}/openapi.json`, anonymous);
  app.use(`${API_PREFIX}/docs`, anonymous);
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
        tags: [...DOCUMENT_TAGS],
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
