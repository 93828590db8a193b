// The Logs product's operator routes, mounted by the operator API under /api/v1/admin/logs: the
// one-time move of log entries from D1 into the per-project stores (logs.migrate.ts).
import { z } from "@hono/zod-openapi";
import { createOperatorRouter, operatorRoute } from "../../platform/admin/operator-routes";
import { dataResponse, jsonBody } from "../../platform/openapi";
import { MIGRATE_MAX_ROWS, migrateLegacyEntries } from "./logs.migrate";

export const logsAdminRoutes = createOperatorRouter();

logsAdminRoutes.openapi(
  operatorRoute({
    method: "post",
    path: "/migrate-entries",
    operationId: "adminMigrateLogEntries",
    summary: "Move log entries from D1 into the per-project stores (one step)",
    description:
      "Operator token only. One-time migration for deployments that stored log entries in D1: moves up to `limit` of the oldest rows into their " +
      "projects' stores and deletes them from D1. Call again until `more` is false. Safe to repeat after a failure: nothing is imported twice. " +
      "`dropped` counts rows of projects that no longer exist (deleted, not moved).",
    request: {
      body: jsonBody(z.object({ limit: z.number().int().min(1).max(MIGRATE_MAX_ROWS).default(MIGRATE_MAX_ROWS) }).openapi("AdminMigrateLogEntries"), {
        limit: 1000,
      }),
    },
    responses: {
      200: dataResponse(
        "What this step did",
        z.object({ moved: z.number().int(), dropped: z.number().int(), more: z.boolean() }).openapi("AdminMigrateLogEntriesResult"),
      ),
    },
  }),
  async (c) => c.json({ data: await migrateLegacyEntries(c.env, c.req.valid("json").limit) }, 200),
);
