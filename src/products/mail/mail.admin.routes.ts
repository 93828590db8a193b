// The Mail product's operator routes, mounted by the operator API under /api/v1/admin/mail: the
// one-time move of email bodies from D1 rows into R2 (mail.migrate.ts).
import { z } from "@hono/zod-openapi";
import { AdminError } from "../../platform/admin/admin.schemas";
import { createOperatorRouter, operatorRoute } from "../../platform/admin/operator-routes";
import { dataResponse, jsonBody, jsonResponse } from "../../platform/openapi";
import { MIGRATE_BODIES_MAX_ROWS, migrateBodies } from "./mail.migrate";

export const mailAdminRoutes = createOperatorRouter();

mailAdminRoutes.openapi(
  operatorRoute({
    method: "post",
    path: "/migrate-bodies",
    operationId: "adminMigrateMailBodies",
    summary: "Move email bodies from D1 into R2 (one step)",
    description:
      "Operator token only. One-time migration for deployments that stored email bodies (`html`, `text`) in D1: writes the bodies of up to `limit` of the oldest " +
      "such emails to the mail body bucket and empties them in D1. Call again until `more` is false. Safe to repeat after a failure: a body written twice is the same object. " +
      "503 when the bucket does not answer (nothing moved in that step).",
    request: {
      body: jsonBody(
        z.object({ limit: z.number().int().min(1).max(MIGRATE_BODIES_MAX_ROWS).default(MIGRATE_BODIES_MAX_ROWS) }).openapi("AdminMigrateMailBodies"),
        { limit: MIGRATE_BODIES_MAX_ROWS },
      ),
    },
    responses: {
      200: dataResponse("What this step did", z.object({ moved: z.number().int(), more: z.boolean() }).openapi("AdminMigrateMailBodiesResult")),
      503: jsonResponse("The mail body bucket did not answer; nothing was moved", AdminError),
    },
  }),
  async (c) => c.json({ data: await migrateBodies(c.env, c.req.valid("json").limit) }, 200),
);
