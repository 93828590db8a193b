// Authenticated routes of log alerts: list and create under a project, change and delete, and the
// history of an alert's firings.
import { z } from "@hono/zod-openapi";
import { createRouter } from "../../platform/router";
import { dataResponse, jsonBody, jsonResponse } from "../../platform/openapi";
import { AlertSchema, CreateAlertBody, FiringsPage, FiringsQuery, IdParam, UpdateAlertBody } from "./logs.schemas";
import { alertRoute, notFound, validation } from "./logs.openapi";
import { alertView, createAlert, deleteAlert, listAlerts, listFirings, updateAlert } from "./log-alerts.service";

export const logAlertsRouter = createRouter();

logAlertsRouter.openapi(
  alertRoute({
    method: "get",
    path: "/projects/{id}/alerts",
    operationId: "listLogAlerts",
    summary: "List a project's alerts",
    description: "Requires `logs:read`. The project's alert rules, oldest first, each with `last_triggered_at`; another team's project answers 404.",
    scope: "logs:read",
    request: { params: IdParam },
    responses: { 200: dataResponse("Alerts", z.array(AlertSchema)), ...notFound("Project") },
  }),
  async (c) => {
    const rows = await listAlerts(c.env, c.get("principal").teamId, c.req.valid("param").id);
    return c.json({ data: rows.map(alertView) }, 200);
  },
);

logAlertsRouter.openapi(
  alertRoute({
    method: "post",
    path: "/projects/{id}/alerts",
    operationId: "createLogAlert",
    summary: "Create an alert",
    description:
      "`enabled` defaults to true. Omitted `channels` are derived from the `notify_*` fields that are set. `notify_email` is required when " +
      "channels include `email`, `notify_webhook` when they include `webhook` (an https URL that passes the SSRF guard). " +
      "`notify_email` must be an accepted member of the team (until the console: its owner), 422 otherwise. " +
      "The check runs every minute; after firing, an alert does not fire again until `window_minutes` have passed.",
    scope: "logs:write",
    idempotent: true,
    request: {
      params: IdParam,
      body: jsonBody(CreateAlertBody, {
        name: "Errors spike",
        level: "error",
        threshold: 50,
        window_minutes: 5,
        channels: ["webhook"],
        notify_webhook: "https://hooks.example.com/alerts",
      }),
    },
    responses: { 201: dataResponse("The alert", AlertSchema), ...notFound("Project"), ...validation },
  }),
  async (c) => {
    const row = await createAlert(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("json"));
    return c.json({ data: alertView(row) }, 201);
  },
);

logAlertsRouter.openapi(
  alertRoute({
    method: "put",
    path: "/alerts/{id}",
    operationId: "updateLogAlert",
    summary: "Update an alert",
    description: "Any subset of the create fields; only the fields given change. The result must still meet the create rules.",
    scope: "logs:write",
    request: { params: IdParam, body: jsonBody(UpdateAlertBody, { threshold: 100, enabled: false }) },
    responses: { 200: dataResponse("The alert", AlertSchema), ...notFound("Alert"), ...validation },
  }),
  async (c) => {
    const row = await updateAlert(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("json"));
    return c.json({ data: alertView(row) }, 200);
  },
);

logAlertsRouter.openapi(
  alertRoute({
    method: "delete",
    path: "/alerts/{id}",
    operationId: "deleteLogAlert",
    summary: "Delete an alert",
    description: "Requires `logs:write`. Deletes the rule and its firing history; another team's alert answers 404.",
    scope: "logs:write",
    request: { params: IdParam },
    responses: { 204: { description: "Deleted" }, ...notFound("Alert") },
  }),
  async (c) => {
    await deleteAlert(c.env, c.get("principal").teamId, c.req.valid("param").id);
    return c.body(null, 204);
  },
);

logAlertsRouter.openapi(
  alertRoute({
    method: "get",
    path: "/alerts/{id}/firings",
    operationId: "listLogAlertFirings",
    summary: "List an alert's firings",
    description:
      "Newest first. `resolved_at` is null while the alert is firing; it is set when the window fell back under the threshold " +
      "(a `log.alert.resolved` notification went out), when a later firing of the same alert took over, or when the alert was " +
      "disabled. Firings are kept 90 days. Pass `pagination.next_cursor` as `cursor` for the next page.",
    scope: "logs:read",
    request: { params: IdParam, query: FiringsQuery },
    responses: { 200: jsonResponse("A page of firings", FiringsPage), ...notFound("Alert"), ...validation },
  }),
  async (c) => c.json(await listFirings(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("query")), 200),
);
