// The Relay product's operator routes, mounted by the operator API under /api/v1/admin/relay: the
// one-time move of events, deliveries and attempts from D1 into the per-source stores (relay.migrate.ts).
import { z } from "@hono/zod-openapi";
import { createOperatorRouter, operatorRoute } from "../../platform/admin/operator-routes";
import { dataResponse, jsonBody } from "../../platform/openapi";
import { MIGRATE_MAX_EVENTS, migrateLegacyEvents } from "./relay.migrate";

export const relayAdminRoutes = createOperatorRouter();

relayAdminRoutes.openapi(
  operatorRoute({
    method: "post",
    path: "/migrate-events",
    operationId: "adminMigrateRelayEvents",
    summary: "Move relay events from D1 into the per-source stores (one step)",
    description:
      "Operator token only. One-time migration for deployments that stored relay events, deliveries and attempts in D1: moves up to `limit` of the " +
      "oldest events (and at most 8 MB of bodies) with their deliveries and attempts into their sources' stores and deletes them from D1. Call " +
      "again until `more` is false. Safe to repeat after a failure: nothing is imported twice. `dropped` counts events of sources that no longer exist.",
    request: {
      body: jsonBody(z.object({ limit: z.number().int().min(1).max(MIGRATE_MAX_EVENTS).default(MIGRATE_MAX_EVENTS) }).openapi("AdminMigrateRelayEvents"), {
        limit: 500,
      }),
    },
    responses: {
      200: dataResponse(
        "What this step did",
        z.object({ moved: z.number().int(), dropped: z.number().int(), more: z.boolean() }).openapi("AdminMigrateRelayEventsResult"),
      ),
    },
  }),
  async (c) => c.json({ data: await migrateLegacyEvents(c.env, c.req.valid("json").limit) }, 200),
);
