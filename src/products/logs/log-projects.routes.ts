// Authenticated routes of log projects: create, list, delete, token rotation, streams, the
// entry query and the live tail (Server-Sent Events).
import { z } from "@hono/zod-openapi";
import { createRouter } from "../../platform/router";
import { dataResponse, jsonBody, jsonResponse } from "../../platform/openapi";
import {
  CreateProjectBody,
  EntriesPage,
  EntriesQuery,
  IdParam,
  LogsError,
  ProjectSchema,
  ProjectWithToken,
  StreamSchema,
  StreamsQuery,
  TailQuery,
} from "./logs.schemas";
import { notFound, route, validation } from "./logs.openapi";
import { CREDENTIAL_CHECK_MS, KEEP_ALIVE_MS, MAX_TAIL_BUFFER_BYTES, MAX_TAIL_MS, MAX_TAILS } from "./store/log-tails";
import { openTail, queryEntries } from "./log-entries.service";
import { createProject, deleteProject, getProject, listProjects, listStreams, projectView, rotateToken } from "./logs.service";

export const logProjectsRouter = createRouter();

logProjectsRouter.openapi(
  route({
    method: "post",
    path: "/projects",
    operationId: "createLogProject",
    summary: "Create a log project",
    description: "Answers the project with its `ingest_token` in plaintext: the only time it is shown (besides rotation). Only its SHA-256 hash is stored.",
    scope: "logs:write",
    idempotent: true,
    request: { body: jsonBody(CreateProjectBody, { name: "api", daily_limit_mb: 100, retention_days: 7 }) },
    responses: { 201: dataResponse("The project and its ingest token", ProjectWithToken), ...validation },
  }),
  async (c) => {
    const { row, token } = await createProject(c.env, c.get("principal").teamId, c.req.valid("json"));
    return c.json({ data: { ...projectView(row), ingest_token: token } }, 201);
  },
);

logProjectsRouter.openapi(
  route({
    method: "get",
    path: "/projects",
    operationId: "listLogProjects",
    summary: "List log projects",
    description:
      "Requires `logs:read`. The team's log projects with their daily limits and retention; ingest tokens are never listed (rotate one to see a new token).",
    scope: "logs:read",
    responses: { 200: dataResponse("The team's projects, oldest first", z.array(ProjectSchema)) },
  }),
  async (c) => c.json({ data: (await listProjects(c.env, c.get("principal").teamId)).map(projectView) }, 200),
);

logProjectsRouter.openapi(
  route({
    method: "get",
    path: "/projects/{id}",
    operationId: "getLogProject",
    summary: "Get a log project",
    description: "Requires `logs:read`. One project without its ingest token; another team's project answers 404.",
    scope: "logs:read",
    request: { params: IdParam },
    responses: { 200: dataResponse("The project (never its token)", ProjectSchema), ...notFound("Project") },
  }),
  async (c) => c.json({ data: projectView(await getProject(c.env, c.get("principal").teamId, c.req.valid("param").id)) }, 200),
);

logProjectsRouter.openapi(
  route({
    method: "delete",
    path: "/projects/{id}",
    operationId: "deleteLogProject",
    summary: "Delete a log project",
    description: "Deletes the project with its alerts, streams and every stored entry; its ingest token answers 401 from this moment. Cannot be undone.",
    scope: "logs:write",
    request: { params: IdParam },
    responses: { 204: { description: "Deleted" }, ...notFound("Project") },
  }),
  async (c) => {
    await deleteProject(c.env, c.get("principal").teamId, c.req.valid("param").id);
    return c.body(null, 204);
  },
);

logProjectsRouter.openapi(
  route({
    method: "post",
    path: "/projects/{id}/rotate-token",
    operationId: "rotateLogProjectToken",
    summary: "Rotate the ingest token",
    description: "Issues a new token and answers it in plaintext; the old token answers 401 from this moment.",
    scope: "logs:write",
    request: { params: IdParam },
    responses: { 200: dataResponse("The project and its new ingest token", ProjectWithToken), ...notFound("Project") },
  }),
  async (c) => {
    const { row, token } = await rotateToken(c.env, c.get("principal").teamId, c.req.valid("param").id);
    return c.json({ data: { ...projectView(row), ingest_token: token } }, 200);
  },
);

logProjectsRouter.openapi(
  route({
    method: "get",
    path: "/projects/{id}/streams",
    operationId: "listLogStreams",
    summary: "List a project's streams",
    description: "Streams are created on first use by ingest; at most 10,000 per project. Sorted by name; page with `after` (the last name seen).",
    scope: "logs:read",
    request: { params: IdParam, query: StreamsQuery },
    responses: { 200: dataResponse("Streams", z.array(StreamSchema)), ...notFound("Project"), ...validation },
  }),
  async (c) => {
    const rows = await listStreams(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("query"));
    return c.json({ data: rows }, 200);
  },
);

logProjectsRouter.openapi(
  route({
    method: "get",
    path: "/projects/{id}/entries",
    operationId: "queryLogEntries",
    summary: "Query log entries",
    description:
      "Newest first. Filters combine with AND: `level`, `stream`, `service`, `trace_id` (exact), `since` (inclusive), `until` (exclusive), " +
      "`q` (substring of `message`, case-insensitive for ASCII). Pass `pagination.next_cursor` as `cursor` for the next page; it is null on the last page.",
    scope: "logs:read",
    request: { params: IdParam, query: EntriesQuery },
    responses: { 200: jsonResponse("A page of entries", EntriesPage), ...notFound("Project"), ...validation },
  }),
  async (c) => {
    const page = await queryEntries(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("query"));
    return c.json(page, 200);
  },
);

logProjectsRouter.openapi(
  route({
    method: "get",
    path: "/projects/{id}/tail",
    operationId: "tailLogEntries",
    summary: "Live tail (Server-Sent Events)",
    description:
      "Streams the entries ingested from now on that match the filters (`level`, `stream`, `service`, `trace_id` exact; `q` a " +
      "case-insensitive substring of `message`) as Server-Sent Events: one `data: <entry JSON>` event per entry, the same JSON as an " +
      `entry of the entries endpoint. A comment line every ${KEEP_ALIVE_MS / 1000} s keeps the stream alive. The stream ends after ` +
      `${MAX_TAIL_MS / 60_000} minutes with \`event: end\` (reconnect to go on), and within ${CREDENTIAL_CHECK_MS / 1000} s of its key's revocation (\`event: end\` with \`{"reason":"credential_revoked"}\`). A reader that falls ${MAX_TAIL_BUFFER_BYTES / 1024 / 1024} MB behind misses ` +
      "entries; an `event: skipped` with `{skipped: N}` says how many. At most " +
      `${MAX_TAILS} tails per project are open at once: one more answers 429.`,
    scope: "logs:read",
    request: { params: IdParam, query: TailQuery },
    responses: {
      200: {
        description: "An event stream",
        content: { "text/event-stream": { schema: z.string().openapi({ example: 'data: {"id":"…","message":"user signed in",…}\n\n' }) } },
      },
      ...notFound("Project"),
      ...validation,
      429: jsonResponse(`\`Too many live tails open for this project (max ${MAX_TAILS})\` (\`{error}\`), or the rate limit`, LogsError),
    },
  }),
  async (c) => {
    const principal = c.get("principal");
    const stream = await openTail(c.env, principal.teamId, principal.keyId, c.req.valid("param").id, c.req.valid("query"));
    return new Response(stream, {
      status: 200,
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache, no-store", "x-accel-buffering": "no" },
    }) as never;
  },
);
