// The Push product's operator routes, mounted by the operator API under /api/v1/admin/push: the
// one-time move of subscribers and deliveries from D1 into the per-app stores (push.migrate.ts).
import { z } from "@hono/zod-openapi";
import { createOperatorRouter, operatorRoute } from "../../platform/admin/operator-routes";
import { dataResponse, jsonBody } from "../../platform/openapi";
import { MIGRATE_MAX_ROWS, migrateLegacyPush } from "./push.migrate";

export const pushAdminRoutes = createOperatorRouter();

pushAdminRoutes.openapi(
  operatorRoute({
    method: "post",
    path: "/migrate-stores",
    operationId: "adminMigratePushStores",
    summary: "Move push subscribers and deliveries from D1 into the per-app stores (one step)",
    description:
      "Operator token only. One-time migration for deployments that stored push subscribers and deliveries in D1: moves up to `limit` rows of each " +
      "into their apps' stores, deletes them from D1 and writes each app's `subscriber_count` from its store. Call again until `more` is false. " +
      "Safe to repeat after a failure: nothing is imported twice. `dropped` counts rows of apps or notifications that no longer exist (deleted, not moved).",
    request: {
      body: jsonBody(z.object({ limit: z.number().int().min(1).max(MIGRATE_MAX_ROWS).default(MIGRATE_MAX_ROWS) }).openapi("AdminMigratePushStores"), {
        limit: 1000,
      }),
    },
    responses: {
      200: dataResponse(
        "What this step did",
        z
          .object({ subscribers: z.number().int(), deliveries: z.number().int(), dropped: z.number().int(), more: z.boolean() })
          .openapi("AdminMigratePushStoresResult"),
      ),
    },
  }),
  async (c) => c.json({ data: await migrateLegacyPush(c.env, c.req.valid("json").limit) }, 200),
);
