// The Surveys product's operator routes, mounted by the operator API under /api/v1/admin/surveys:
// the one-time move of responses from D1 into the per-survey stores (surveys.migrate.ts).
import { z } from "@hono/zod-openapi";
import { createOperatorRouter, operatorRoute } from "../../platform/admin/operator-routes";
import { dataResponse, jsonBody } from "../../platform/openapi";
import { MIGRATE_MAX_ROWS, migrateLegacyResponses } from "./surveys.migrate";

export const surveysAdminRoutes = createOperatorRouter();

surveysAdminRoutes.openapi(
  operatorRoute({
    method: "post",
    path: "/migrate-responses",
    operationId: "adminMigrateSurveyResponses",
    summary: "Move survey responses from D1 into the per-survey stores (one step)",
    description:
      "Operator token only. One-time migration for deployments that stored survey responses in D1: moves up to `limit` of the oldest rows into " +
      "their surveys' stores (which rebuild the summary counters from them) and deletes them from D1; once none is left, deletes the former " +
      "summary rows. Call again until `more` is false. Safe to repeat after a failure: nothing is imported twice. `dropped` counts rows of " +
      "surveys that no longer exist (deleted, not moved).",
    request: {
      body: jsonBody(z.object({ limit: z.number().int().min(1).max(MIGRATE_MAX_ROWS).default(MIGRATE_MAX_ROWS) }).openapi("AdminMigrateSurveyResponses"), {
        limit: 1000,
      }),
    },
    responses: {
      200: dataResponse(
        "What this step did",
        z.object({ moved: z.number().int(), dropped: z.number().int(), more: z.boolean() }).openapi("AdminMigrateSurveyResponsesResult"),
      ),
    },
  }),
  async (c) => c.json({ data: await migrateLegacyResponses(c.env, c.req.valid("json").limit) }, 200),
);
