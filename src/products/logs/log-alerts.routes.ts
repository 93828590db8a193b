// Authenticated routes of log alerts: list and create under a project, change and delete, and the
// history of an alert's firings.
import { createRoute, z } from "@hono/zod-openapi";
import { bearerSecurity, createRouter } from "../../platform/router";
import { authResponses, dataResponse, jsonBody, jsonResponse } from "../../platform/openapi";
import { AlertSchema, CreateAlertBody, FiringsPage, FiringsQuery, IdParam, UpdateAlertBody } from "./logs.schemas";
import { notFound, read, validation, write } from "./logs.openapi";
import { alertView, createAlert, deleteAlert, listAlerts, listFirings, updateAlert } from "./log-alerts.service";

export const logAlertsRouter = createRouter();

logAlertsRouter.openapi(
  createRoute({
    method: "get",
    path: "/projects/{id}/alerts",
    operationId: "listLogAlerts",
    tags: ["Logs alerts"],
    summary: "List a project's alerts",
    security: bearerSecurity,
    middleware: read,
    request: { params: IdParam },
    responses: { 200: dataResponse("Alerts", z.array(AlertSchema)), ...notFound("Project"), ...authResponses },
  }),
  async (c) => {
    const rows = await listAlerts(c.env, c.get("principal").teamId, c.req.valid("param").id);
    return c.json({ data: rows.map(alertView) }, 200);
  },
);

logAlertsRouter.openapi(
  createRoute({
    method: "post",
    path: "/projects/{id}/alerts",
    operationId: "createLogAlert",
    tags: ["Logs alerts"],
    summary: "Create an alert",
    description:
      "`enabled` defaults to true. Omitted `channels` are derived from the `notify_*` fields that are set. `notify_email` is required when " +
      "channels include `email`, `notify_webhook` when they include `webhook` (an https URL that passes the SSRF guard). " +
      "The check runs every minute; after firing, an alert does not fire again until `window_minutes` have passed.",
    security: bearerSecurity,
    middleware: write,
    request: { params: IdParam, body: jsonBody(CreateAlertBody) },
    responses: { 201: dataResponse("The alert", AlertSchema), ...notFound("Project"), ...validation, ...authResponses },
  }),
  async (c) => {
    const row = await createAlert(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("json"));
    return c.json({ data: alertView(row) }, 201);
  },
);

logAlertsRouter.openapi(
  createRoute({
    method: "put",
    path: "/alerts/{id}",
    operationId: "updateLogAlert",
    tags: ["Logs alerts"],
    summary: "Update an alert",
    description: "Any subset of the create fields; only the fields given change. The result must still meet the create rules.",
    security: bearerSecurity,
    middleware: write,
    request: { params: IdParam, body: jsonBody(UpdateAlertBody) },
    responses: { 200: dataResponse("The alert", AlertSchema), ...notFound("Alert"), ...validation, ...authResponses },
  }),
  async (c) => {
    const row = await updateAlert(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("json"));
    return c.json({ data: alertView(row) }, 200);
  },
);

logAlertsRouter.openapi(
  createRoute({
    method: "delete",
    path: "/alerts/{id}",
    operationId: "deleteLogAlert",
    tags: ["Logs alerts"],
    summary: "Delete an alert",
    security: bearerSecurity,
    middleware: write,
    request: { params: IdParam },
    responses: { 204: { description: "Deleted" }, ...notFound("Alert"), ...authResponses },
  }),
  async (c) => {
    await deleteAlert(c.env, c.get("principal").teamId, c.req.valid("param").id);
    return c.body(null, 204);
  },
);

logAlertsRouter.openapi(
  createRoute({
    method: "get",
    path: "/alerts/{id}/firings",
    operationId: "listLogAlertFirings",
    tags: ["Logs alerts"],
    summary: "List an alert's firings",
    description:
      "Newest first. `resolved_at` is null while the alert is firing; it is set when the window fell back under the threshold " +
      "(a `log.alert.resolved` notification went out), when a later firing of the same alert took over, or when the alert was " +
      "disabled. Firings are kept 90 days. Pass `pagination.next_cursor` as `cursor` for the next page.",
    security: bearerSecurity,
    middleware: read,
    request: { params: IdParam, query: FiringsQuery },
    responses: { 200: jsonResponse("A page of firings", FiringsPage), ...notFound("Alert"), ...validation, ...authResponses },
  }),
  async (c) => c.json(await listFirings(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("query")), 200),
);
