// Audit routes of scan runs: start a scan (also in the `strict` bucket, its counter shared with
// report share), read one, list them; and the scan schedules. The run happens on the audit-scans
// queue (audit-scan.consumer.ts).
import { z } from "@hono/zod-openapi";
import { jsonBody, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { BASE, ok, okPage, route, scopeOf } from "./audit.openapi";
import { AuditErrorSchema, envelope, ListMeta, Meta, ProjectParams } from "./audit.schemas";
import { createSchedule, deleteSchedule, listSchedules, MAX_SCHEDULES_PER_PROJECT } from "./audit-scan-schedules.service";
import { CreateScheduleBody, ListScansQuery, Scan, ScanParams, Schedule, StartScanBody } from "./audit-scan.schemas";
import { getScan, listScans, startScan } from "./audit-scan.service";

export const auditScanRouter = createRouter();

auditScanRouter.openapi(
  route({
    method: "post",
    path: `${BASE}/scans`,
    operationId: "createAuditScan",
    summary: "Scan a site's security headers",
    description:
      "Queues a scan of `target_url` → 202 with the scan `queued`; poll `GET /scans/{id}` until `finished` (score, grade, tests) or `failed` (`error`). A second scan of the same target in the project within 3 minutes answers 200 with that scan instead of a new one. Runs under the `strict` bucket, its counter shared with report share (its 429 is the platform rate-limit body). A missing or malformed URL, another scheme, credentials, a private or internal address or this platform's own host → 422 `invalid_params`. Each failing test opens (or keeps) a finding for the target and test; a passing one closes it.",
    scope: "audit:write",
    idempotent: true,
    strict: "audit_share",
    request: { params: ProjectParams, body: jsonBody(StartScanBody, { target_url: "https://example.com/" }) },
    responses: {
      200: jsonResponse("A scan of the same target started within 3 minutes", envelope(Scan)),
      202: jsonResponse("The scan, queued", envelope(Scan)),
      503: jsonResponse("`unavailable`: the scan could not be stored", AuditErrorSchema),
    },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    const { scan, created } = await startScan(c.env, scopeOf(c, project_id), c.req.valid("json").target_url);
    return created ? c.json(ok(c, scan), 202) : c.json(ok(c, scan), 200);
  },
);

auditScanRouter.openapi(
  route({
    method: "get",
    path: `${BASE}/scans`,
    operationId: "listAuditScans",
    summary: "List scans",
    description: "Newest first; optional `target_url` filter; `page` (1-based) and `per_page` (default 20, max 100).",
    scope: "audit:read",
    request: { params: ProjectParams, query: ListScansQuery },
    responses: { 200: jsonResponse("Scans", z.object({ data: z.array(Scan), meta: ListMeta, error: z.null() })) },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    const query = c.req.valid("query");
    const { items, total } = await listScans(c.env, scopeOf(c, project_id), query);
    return c.json(okPage(c, items, total, query), 200);
  },
);

auditScanRouter.openapi(
  route({
    method: "get",
    path: `${BASE}/scans/{id}`,
    operationId: "getAuditScan",
    summary: "Get a scan with its score, grade and tests",
    description:
      "`status` is `queued`, `running`, `finished` (score, grade, tests) or `failed` (`error`). Another team's or project's scan answers 404 `not_found`.",
    scope: "audit:read",
    request: { params: ScanParams },
    responses: { 200: jsonResponse("The scan", envelope(Scan)) },
  }),
  async (c) => {
    const { project_id, id } = c.req.valid("param");
    return c.json(ok(c, await getScan(c.env, scopeOf(c, project_id), id)), 200);
  },
);

auditScanRouter.openapi(
  route({
    method: "post",
    path: `${BASE}/scan-schedules`,
    operationId: "createAuditScanSchedule",
    summary: "Scan a target every day or week",
    description: `The hourly job queues a scan of \`target_url\` when due (the first at its next run), then every \`day\` or \`week\`. When a scheduled scan grades lower than the schedule's previous one, the team's members are mailed. At most ${MAX_SCHEDULES_PER_PROJECT} per project and one per target (else 422 \`invalid_params\`).`,
    scope: "audit:write",
    idempotent: true,
    request: { params: ProjectParams, body: jsonBody(CreateScheduleBody, { target_url: "https://example.com/", every: "week" }) },
    responses: { 201: jsonResponse("The schedule", envelope(Schedule)) },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(ok(c, await createSchedule(c.env, scopeOf(c, project_id), c.req.valid("json"))), 201);
  },
);

auditScanRouter.openapi(
  route({
    method: "get",
    path: `${BASE}/scan-schedules`,
    operationId: "listAuditScanSchedules",
    summary: "List scan schedules",
    description: "Oldest first (at most 20).",
    scope: "audit:read",
    request: { params: ProjectParams },
    responses: { 200: jsonResponse("Schedules", z.object({ data: z.array(Schedule), meta: Meta, error: z.null() })) },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(ok(c, await listSchedules(c.env, scopeOf(c, project_id))), 200);
  },
);

auditScanRouter.openapi(
  route({
    method: "delete",
    path: `${BASE}/scan-schedules/{id}`,
    operationId: "deleteAuditScanSchedule",
    summary: "Delete a scan schedule",
    description: "No more scans are queued for it; its scans stay. Another team's or project's schedule answers 404 `not_found`.",
    scope: "audit:write",
    request: { params: ScanParams },
    responses: { 200: jsonResponse("Deleted", envelope(z.object({ id: z.string(), deleted: z.literal(true) }))) },
  }),
  async (c) => {
    const { project_id, id } = c.req.valid("param");
    await deleteSchedule(c.env, scopeOf(c, project_id), id);
    return c.json(ok(c, { id, deleted: true as const }), 200);
  },
);
