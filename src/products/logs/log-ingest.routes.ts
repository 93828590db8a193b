// The Logs ingest surface, mounted at /logs/ingest: one entry as JSON, or an NDJSON batch,
// authenticated with a project's ingest token only (body `{ok: true}` / `{error}`).
import { readBodyCapped } from "../../platform/body";
import { z } from "@hono/zod-openapi";
import { nowMs } from "../../platform/clock";
import { ApiError, MALFORMED_JSON } from "../../platform/errors";
import { jsonResponse, productRoutes } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { INGEST_MESSAGES, MAX_BATCH_BYTES, MAX_SINGLE_BYTES, judgeEntry, parseNdjson, storeEntries } from "./logs.ingest";
import { ingestAuth, ingestProject } from "./logs.middleware";
import { BatchIngestOk, IngestError, IngestOk, LEVEL_MESSAGE, LogEntryInput, MESSAGE_REQUIRED } from "./logs.schemas";

/** `createRoute` of the ingest routes: a project's ingest token, and the errors both routes answer. */
const route = productRoutes({
  tags: ["Logs ingest"],
  security: [{ ingestToken: [] }],
  authenticate: ingestAuth(),
  errors: {
    401: jsonResponse("Invalid or missing ingest token (a team API key answers 401 here)", IngestError),
    429: jsonResponse("`Rate limit exceeded` (log_ingest bucket, with retry_after), `Daily log ingestion limit exceeded`, or the monthly quota", IngestError),
    503: jsonResponse("Log storage temporarily unavailable: nothing was stored, retry after a brief backoff", IngestError),
  },
});

// Log ingest bodies are `{error: <message>}` (spec: Response envelopes); each route reads its body
// itself (`body: { own }`: 1 MB single, 5 MB batch; platform/body.ts).
export const logsIngestRouter = createRouter({ errorFormat: (error) => ({ error: error.message }) });
logsIngestRouter.openAPIRegistry.registerComponent("securitySchemes", "ingestToken", {
  type: "http",
  scheme: "bearer",
  description: "A log project's ingest token (`lgt_...`), shown on project creation and rotation.",
});
logsIngestRouter.openAPIRegistry.register("LogEntryInput", LogEntryInput);

logsIngestRouter.openapi(
  route({
    method: "post",
    path: "/",
    operationId: "ingestLogEntry",
    summary: "Ingest one log entry",
    description:
      "Authenticated with the project's ingest token only. Answers 422 with the first failing rule: " +
      `\`${MESSAGE_REQUIRED}\`, \`${LEVEL_MESSAGE}\`, \`${INGEST_MESSAGES.streamLimit}\` (a new stream at the cap), ` +
      "a field-type message such as `stream must be a string`, or a `timestamp` outside 7 days before to 1 hour after receipt " +
      "(`timestamp must not be more than 7 days before the time of receipt`). Body up to 1 MB; malformed JSON answers 400.",
    body: { own: MAX_SINGLE_BYTES },
    request: {
      body: {
        required: true,
        content: {
          "application/json": {
            schema: { $ref: "#/components/schemas/LogEntryInput" },
            example: { message: "payment failed", level: "error", service: "checkout", metadata: { order_id: "o_123" } },
          },
        },
      },
    },
    responses: {
      202: jsonResponse("Stored", IngestOk),
      400: jsonResponse("Malformed JSON in request body", IngestError),
      413: jsonResponse(INGEST_MESSAGES.singleTooLarge, IngestError),
      422: jsonResponse("The entry failed validation, or names a new stream at the stream cap", IngestError),
    },
  }),
  async (c) => {
    const project = ingestProject(c);
    const body = await readBodyCapped(c.req.raw, MAX_SINGLE_BYTES, () => new ApiError("payload_too_large", INGEST_MESSAGES.singleTooLarge));
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder().decode(body));
    } catch {
      throw ApiError.badRequest(MALFORMED_JSON);
    }
    const receivedAt = nowMs();
    const judged = judgeEntry(value, receivedAt);
    if ("error" in judged) throw new ApiError("validation", judged.error);
    await storeEntries(c.env, project, [{ entry: judged.entry, ts: judged.ts, bytes: body.byteLength }], receivedAt);
    return c.json({ ok: true as const }, 202);
  },
);

logsIngestRouter.openapi(
  route({
    method: "post",
    path: "/batch",
    operationId: "ingestLogBatch",
    summary: "Ingest an NDJSON batch",
    description:
      "Authenticated with the project's ingest token only. One JSON log entry per line (`\\n`, `\\r\\n` tolerated, blank lines ignored), up to 5 MB read and 10,000 counted entries. " +
      "`count` is the number stored; `dropped` the lines that were not JSON, failed validation (a `timestamp` outside its window included) or came past the cap; " +
      "`count + dropped` equals the number of non-empty lines. A batch naming a new stream while the project is at the " +
      "stream cap is rejected whole (422) and nothing of it is stored; so is a batch that would pass the daily limit (429).",
    body: { own: MAX_BATCH_BYTES },
    request: {
      body: {
        required: true,
        content: { "application/x-ndjson": { schema: z.string().openapi({ example: '{"message":"a"}\n{"message":"b","level":"error"}\n' }) } },
      },
    },
    responses: {
      202: jsonResponse("Stored the valid lines", BatchIngestOk),
      413: jsonResponse(INGEST_MESSAGES.batchTooLarge, IngestError),
      422: jsonResponse(INGEST_MESSAGES.streamLimit, IngestError),
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
