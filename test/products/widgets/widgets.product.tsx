/** @jsxImportSource hono/jsx */
// A product registered only in the tests (test/products/widgets/widgets.test.ts), declaring every
// hook of the definition: API and public routers, operator routes, console pages with their
// navigation entry, a queue with its consumer, a cron job and a retention job, a Durable Object
// class, scopes with an implied one, a metered service with its plan limits, a rate-limit bucket
// and a strict family, and an OpenAPI tag. Its names are not in the platform's types (they are not
// augmented for a test), hence the casts.
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../../src/env";
import { page } from "../../../src/console/render";
import { operatorRoute, createOperatorRouter } from "../../../src/platform/admin/operator-routes";
import { defineConsumer } from "../../../src/platform/jobs/consume";
import { defineCron } from "../../../src/platform/jobs/cron";
import { defineQueue } from "../../../src/platform/jobs/queues";
import { dataResponse, productRoutes } from "../../../src/platform/openapi";
import type { Service } from "../../../src/platform/plans";
import { defineProduct } from "../../../src/platform/products";
import type { ProductBucket, StrictFamily } from "../../../src/platform/rate-limit/buckets";
import { createRouter } from "../../../src/platform/router";
import type { Scope } from "../../../src/platform/scopes";

export const READ = "widgets:read" as Scope;
export const WRITE = "widgets:write" as Scope;
export const SERVICE = "widgets" as Service;
// A name no product declares in the types (the test registers it at run time), cast to a bucket a public route may count in.
export const BUCKET = "widget_public" as Exclude<ProductBucket, "flags_client">;
export const FAMILY = "widget_writes" as StrictFamily;

/** What the widgets' jobs did, for the test to read. */
export const ran: string[] = [];

const route = productRoutes({ tags: ["Widgets"], security: "bearer" });
const Widget = z.object({ name: z.string() }).openapi("TestWidget");

const widgetsRouter = createRouter();
widgetsRouter.openapi(
  route({
    method: "get",
    path: "/",
    operationId: "listTestWidgets",
    scope: READ,
    summary: "List widgets",
    description: "The test product's read.",
    responses: { 200: dataResponse("Widgets", z.array(Widget)) },
  }),
  (c) => c.json({ data: [{ name: "first" }] }, 200),
);
widgetsRouter.openapi(
  route({
    method: "post",
    path: "/",
    operationId: "makeTestWidget",
    scope: WRITE,
    strict: FAMILY,
    summary: "Make a widget",
    description: "The test product's write, counted in its strict family.",
    responses: { 200: dataResponse("The widget", Widget) },
  }),
  (c) => c.json({ data: { name: "made" } }, 200),
);
widgetsRouter.use("*", ...route.unmatched(READ, WRITE));

const publicRoute = productRoutes({ tags: ["Widgets"], security: "public", bucket: BUCKET });
const widgetsPublicRouter = createRouter();
widgetsPublicRouter.openapi(
  publicRoute({
    method: "get",
    path: "/",
    operationId: "getPublicTestWidget",
    summary: "A public widget",
    description: "No credential; counted per client IP in the product's own bucket.",
    responses: { 200: dataResponse("The widget", Widget) },
  }),
  (c) => c.json({ data: { name: "public" } }, 200),
);

const widgetsAdminRoutes = createOperatorRouter();
widgetsAdminRoutes.openapi(
  operatorRoute({
    method: "get",
    path: "/stats",
    operationId: "getTestWidgetStats",
    summary: "Widget statistics",
    description: "Operator token only.",
    responses: { 200: dataResponse("Statistics", z.object({ widgets: z.number() })) },
  }),
  (c) => c.json({ data: { widgets: 1 } }, 200),
);

const widgetsPages = new Hono<AppEnv>();
widgetsPages.get("/widgets", (c) => page(c, { title: "Widgets", active: "widgets" }, <p data-testid="widgets-page">Every widget of the team.</p>));

export const widgetJobs = defineQueue({ name: "widget-jobs", binding: null, maxRetries: 3 });

export const widgetJobsConsumer = defineConsumer({
  queue: widgetJobs,
  schema: z.unknown(),
  handle: async (body) => {
    ran.push(`consumed ${JSON.stringify(body)}`);
    return null;
  },
});

export const widgetsTidyCron = defineCron({ name: "widgets tidy", schedule: "hourly", run: async () => ran.push("tidied") });
export const widgetsRetentionCron = defineCron({ name: "widgets retention", schedule: "hourly", run: async () => ran.push("purged") });

export class WidgetStore {}

export const widgets = defineProduct({
  name: "widgets",
  mounts: [
    { prefix: "/widgets-public", router: widgetsPublicRouter },
    { prefix: "/api/v1/widgets", router: widgetsRouter },
  ],
  operatorRoutes: widgetsAdminRoutes,
  console: { pages: widgetsPages, nav: { path: "widgets", label: "Widgets" } },
  queues: [widgetJobs],
  consumers: [widgetJobsConsumer],
  crons: [widgetsTidyCron],
  retention: [widgetsRetentionCron],
  durableObjects: { WidgetStore },
  scopes: { label: "Widgets", names: [READ, WRITE], implied: { [WRITE]: [READ] } },
  services: {
    [SERVICE]: {
      metric: "widgets_made",
      label: "Widgets",
      unit: "widgets",
      limits: { free: 5, starter: 50, pro: 500, scale: 5_000, enterprise: null },
      visibleTo: [READ, WRITE],
    },
  },
  rateLimits: { buckets: { [BUCKET]: 3 }, strictFamilies: [FAMILY] },
  tags: [{ name: "Widgets", description: "The test product: every hook of a definition." }],
});
