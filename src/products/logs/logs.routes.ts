// The Logs product's HTTP surface. Two routers: `logsIngestRouter` (mounted at /logs/ingest,
// ingest token only, body `{ok: true}` / `{error}`) and `logsRouter` (projects, entries, alerts:
// team API key with logs:read / logs:write, body `{data: ...}` / `{error[, details]}`).
import { readBodyCapped } from "../../platform/body";
import { createRoute, z } from "@hono/zod-openapi";
import { getDb } from "../../db/client";
import { nowMs } from "../../platform/clock";
import { auth, requireScope } from "../../platform/auth";
import { ApiError, registerErrorFormat } from "../../platform/errors";
import { authResponses, dataResponse, jsonBody, jsonResponse } from "../../platform/openapi";
import { bearerSecurity, createRouter } from "../../platform/router";
import { ssrfOptions } from "../../platform/ssrf";
import {
  INGEST_MESSAGES,
  MAX_BATCH_BYTES,
  MAX_SINGLE_BYTES,
  judgeEntry,
  parseNdjson,
  storeEntries,
} from "./logs.ingest";
import { ingestAuth, ingestProject } from "./logs.middleware";
import {
  AlertSchema,
  BatchIngestOk,
  CreateAlertBody,
  CreateProjectBody,
  EntriesPage,
  EntriesQuery,
  FiringsPage,
  FiringsQuery,
  IdParam,
  IngestError,
  IngestOk,
  LEVEL_MESSAGE,
  LogEntryInput,
  LogsError,
  MESSAGE_REQUIRED,
  ProjectSchema,
  ProjectWithToken,
  StreamSchema,
  StreamsQuery,
  TailQuery,
  UpdateAlertBody,
} from "./logs.schemas";
import { KEEP_ALIVE_MS, MAX_TAIL_BUFFER_BYTES, MAX_TAIL_MS, MAX_TAILS } from "./store/log-tails";
import {
  alertView,
  createAlert,
  createProject,
  deleteAlert,
  deleteProject,
  getProject,
  listAlerts,
  listFirings,
  listProjects,
  listStreams,
  openTail,
  projectView,
  queryEntries,
  rotateToken,
  updateAlert,
} from "./logs.service";

// Log ingest bodies are `{error: <message>}` (spec: Response envelopes); the rest of /logs uses the
// Validation shape, with `details` only on field validation failures.
registerErrorFormat("/api/v1/logs/ingest", (error) => ({ error: error.message }));
registerErrorFormat("/api/v1/logs", (error) => (error.details ? { error: error.message, details: error.details } : { error: error.message }));

const ingestSecurity = [{ ingestToken: [] }];
const ingestErrors = {
  401: jsonResponse("Invalid or missing ingest token (a team API key answers 401 here)", IngestError),
  429: jsonResponse("`Rate limit exceeded` (log_ingest bucket, with retry_after), `Daily log ingestion limit exceeded`, or the monthly quota", IngestError),
  503: jsonResponse("Log storage temporarily unavailable: nothing was stored, retry after a brief backoff", IngestError),
};

export const logsIngestRouter = createRouter();
logsIngestRouter.openAPIRegistry.registerComponent("securitySchemes", "ingestToken", {
  type: "http",
  scheme: "bearer",
  description: "A log project's ingest token (`lgt_...`), shown on project creation and rotation.",
});
logsIngestRouter.openAPIRegistry.register("LogEntryInput", LogEntryInput);

logsIngestRouter.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "ingestLogEntry",
    tags: ["Logs ingest"],
    summary: "Ingest one log entry",
    description:
      "Authenticated with the project's ingest token only. Answers 422 with the first failing rule: " +
      `\`${MESSAGE_REQUIRED}\`, \`${LEVEL_MESSAGE}\`, \`${INGEST_MESSAGES.streamLimit}\` (a new stream at the cap), ` +
      "a field-type message such as `stream must be a string`, or a `timestamp` outside 7 days before to 1 hour after receipt " +
      "(`timestamp must not be more than 7 days before the time of receipt`). Body up to 1 MB; malformed JSON answers 400.",
    security: ingestSecurity,
    middleware: [ingestAuth()],
    request: { body: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/LogEntryInput" } } } } },
    responses: {
      202: jsonResponse("Stored", IngestOk),
      400: jsonResponse("Malformed JSON in request body", IngestError),
      413: jsonResponse(INGEST_MESSAGES.singleTooLarge, IngestError),
      422: jsonResponse("The entry failed validation, or names a new stream at the stream cap", IngestError),
      ...ingestErrors,
    },
  }),
  async (c) => {
    const project = ingestProject(c);
    const body = await readBodyCapped(c.req.raw, MAX_SINGLE_BYTES, () => new ApiError("payload_too_large", INGEST_MESSAGES.singleTooLarge));
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder().decode(body));
    } catch {
      throw ApiError.badRequest("Malformed JSON in request body");
    }
    const receivedAt = nowMs();
    const judged = judgeEntry(value, receivedAt);
    if ("error" in judged) throw new ApiError("validation", judged.error);
    await storeEntries(c.env, project, [{ entry: judged.entry, ts: judged.ts, bytes: body.byteLength }], receivedAt);
    return c.json({ ok: true as const }, 202);
  },
);

logsIngestRouter.openapi(
  createRoute({
    method: "post",
    path: "/batch",
    operationId: "ingestLogBatch",
    tags: ["Logs ingest"],
    summary: "Ingest an NDJSON batch",
    description:
      "One JSON log entry per line (`\\n`, `\\r\\n` tolerated, blank lines ignored), up to 5 MB read and 10,000 counted entries. " +
      "`count` is the number stored; `dropped` the lines that were not JSON, failed validation (a `timestamp` outside its window included) or came past the cap; " +
      "`count + dropped` equals the number of non-empty lines. A batch naming a new stream while the project is at the " +
      "stream cap is rejected whole (422) and nothing of it is stored; so is a batch that would pass the daily limit (429).",
    security: ingestSecurity,
    middleware: [ingestAuth()],
    request: { body: { required: true, content: { "application/x-ndjson": { schema: z.string().openapi({ example: '{"message":"a"}\n{"message":"b","level":"error"}\n' }) } } } },
    responses: {
      202: jsonResponse("Stored the valid lines", BatchIngestOk),
      413: jsonResponse(INGEST_MESSAGES.batchTooLarge, IngestError),
      422: jsonResponse(INGEST_MESSAGES.streamLimit, IngestError),
      ...ingestErrors,
    },
  }),
  async (c) => {
    const project = ingestProject(c);
    const body = await readBodyCapped(c.req.raw, MAX_BATCH_BYTES, () => new ApiError("payload_too_large", INGEST_MESSAGES.batchTooLarge));
    const receivedAt = nowMs();
    const { accepted, dropped } = parseNdjson(body, receivedAt);
    await storeEntries(c.env, project, accepted, receivedAt);
    return c.json({ ok: true as const, count: accepted.length, dropped }, 202);
  },
);

// Projects, entries, alerts

const notFound = (what: string) => ({ 404: jsonResponse(`${what} not found (or another team's)`, LogsError) });
const validation = { 422: jsonResponse("Validation failed: `{error: 'Validation failed', details: {field: [message]}}`", LogsError) };
const read = [auth(), requireScope("logs:read")];
const write = [auth(), requireScope("logs:write")];

export const logsRouter = createRouter();

logsRouter.openapi(
  createRoute({
    method: "post",
    path: "/projects",
    operationId: "createLogProject",
    tags: ["Logs"],
    summary: "Create a log project",
    description: "Answers the project with its `ingest_token` in plaintext: the only time it is shown (besides rotation). Only its SHA-256 hash is stored.",
    security: bearerSecurity,
    middleware: write,
    request: { body: jsonBody(CreateProjectBody) },
    responses: { 201: dataResponse("The project and its ingest token", ProjectWithToken), ...validation, ...authResponses },
  }),
  async (c) => {
    const { row, token } = await createProject(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("json"));
    return c.json({ data: { ...projectView(row), ingest_token: token } }, 201);
  },
);

logsRouter.openapi(
  createRoute({
    method: "get",
    path: "/projects",
    operationId: "listLogProjects",
    tags: ["Logs"],
    summary: "List log projects",
    security: bearerSecurity,
    middleware: read,
    responses: { 200: dataResponse("The team's projects, oldest first", z.array(ProjectSchema)), ...authResponses },
  }),
  async (c) => c.json({ data: (await listProjects(getDb(c.env.DB), c.get("principal").teamId)).map(projectView) }, 200),
);

logsRouter.openapi(
  createRoute({
    method: "get",
    path: "/projects/{id}",
    operationId: "getLogProject",
    tags: ["Logs"],
    summary: "Get a log project",
    security: bearerSecurity,
    middleware: read,
    request: { params: IdParam },
    responses: { 200: dataResponse("The project (never its token)", ProjectSchema), ...notFound("Project"), ...authResponses },
  }),
  async (c) => c.json({ data: projectView(await getProject(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id)) }, 200),
);

logsRouter.openapi(
  createRoute({
    method: "delete",
    path: "/projects/{id}",
    operationId: "deleteLogProject",
    tags: ["Logs"],
    summary: "Delete a log project",
    description:
      "Deletes the project with its alerts, streams and every stored entry; its ingest token answers 401 from this moment. Cannot be undone.",
    security: bearerSecurity,
    middleware: write,
    request: { params: IdParam },
    responses: { 204: { description: "Deleted" }, ...notFound("Project"), ...authResponses },
  }),
  async (c) => {
    await deleteProject(c.env, c.get("principal").teamId, c.req.valid("param").id);
    return c.body(null, 204);
  },
);

logsRouter.openapi(
  createRoute({
    method: "post",
    path: "/projects/{id}/rotate-token",
    operationId: "rotateLogProjectToken",
    tags: ["Logs"],
    summary: "Rotate the ingest token",
    description: "Issues a new token and answers it in plaintext; the old token answers 401 from this moment.",
    security: bearerSecurity,
    middleware: write,
    request: { params: IdParam },
    responses: { 200: dataResponse("The project and its new ingest token", ProjectWithToken), ...notFound("Project"), ...authResponses },
  }),
  async (c) => {
    const { row, token } = await rotateToken(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id);
    return c.json({ data: { ...projectView(row), ingest_token: token } }, 200);
  },
);

logsRouter.openapi(
  createRoute({
    method: "get",
    path: "/projects/{id}/streams",
    operationId: "listLogStreams",
    tags: ["Logs"],
    summary: "List a project's streams",
    description: "Streams are created on first use by ingest; at most 10,000 per project. Sorted by name; page with `after` (the last name seen).",
    security: bearerSecurity,
    middleware: read,
    request: { params: IdParam, query: StreamsQuery },
    responses: { 200: dataResponse("Streams", z.array(StreamSchema)), ...notFound("Project"), ...validation, ...authResponses },
  }),
  async (c) => {
    const rows = await listStreams(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id, c.req.valid("query"));
    return c.json({ data: rows }, 200);
  },
);

logsRouter.openapi(
  createRoute({
    method: "get",
    path: "/projects/{id}/entries",
    operationId: "queryLogEntries",
    tags: ["Logs"],
    summary: "Query log entries",
    description:
      "Newest first. Filters combine with AND: `level`, `stream`, `service`, `trace_id` (exact), `since` (inclusive), `until` (exclusive), " +
      "`q` (substring of `message`, case-insensitive for ASCII). Pass `pagination.next_cursor` as `cursor` for the next page; it is null on the last page.",
    security: bearerSecurity,
    middleware: read,
    request: { params: IdParam, query: EntriesQuery },
    responses: { 200: jsonResponse("A page of entries", EntriesPage), ...notFound("Project"), ...validation, ...authResponses },
  }),
  async (c) => {
    const page = await queryEntries(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("query"));
    return c.json(page, 200);
  },
);

logsRouter.openapi(
  createRoute({
    method: "get",
    path: "/projects/{id}/tail",
    operationId: "tailLogEntries",
    tags: ["Logs"],
    summary: "Live tail (Server-Sent Events)",
    description:
      "Streams the entries ingested from now on that match the filters (`level`, `stream`, `service`, `trace_id` exact; `q` a " +
      "case-insensitive substring of `message`) as Server-Sent Events: one `data: <entry JSON>` event per entry, the same JSON as an " +
      `entry of the entries endpoint. A comment line every ${KEEP_ALIVE_MS / 1000} s keeps the stream alive. The stream ends after ` +
      `${MAX_TAIL_MS / 60_000} minutes with \`event: end\` (reconnect to go on). A reader that falls ${MAX_TAIL_BUFFER_BYTES / 1024 / 1024} MB behind misses ` +
      "entries; an `event: skipped` with `{skipped: N}` says how many. At most " +
      `${MAX_TAILS} tails per project are open at once: one more answers 429.`,
    security: bearerSecurity,
    middleware: read,
    request: { params: IdParam, query: TailQuery },
    responses: {
      200: { description: "An event stream", content: { "text/event-stream": { schema: z.string().openapi({ example: 'data: {"id":"…","message":"user signed in",…}\n\n' }) } } },
      ...notFound("Project"),
      ...validation,
      ...authResponses,
      429: jsonResponse(`\`Too many live tails open for this project (max ${MAX_TAILS})\` (\`{error}\`), or the rate limit`, LogsError),
    },
  }),
  async (c) => {
    const stream = await openTail(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("query"));
    return new Response(stream, {
      status: 200,
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache, no-store", "x-accel-buffering": "no" },
    }) as never;
  },
);

logsRouter.openapi(
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
    const rows = await listAlerts(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id);
    return c.json({ data: rows.map(alertView) }, 200);
  },
);

logsRouter.openapi(
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
    const row = await createAlert(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id, c.req.valid("json"), ssrfOptions(c.env));
    return c.json({ data: alertView(row) }, 201);
  },
);

logsRouter.openapi(
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
    const row = await updateAlert(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id, c.req.valid("json"), ssrfOptions(c.env));
    return c.json({ data: alertView(row) }, 200);
  },
);

logsRouter.openapi(
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
    await deleteAlert(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id);
    return c.body(null, 204);
  },
);

logsRouter.openapi(
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
  async (c) => c.json(await listFirings(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id, c.req.valid("query")), 200),
);
