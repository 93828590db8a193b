// The public ingest address of webhook relay sources, {APP_URL}/in/<slug>: no credential, the
// `public` rate-limit bucket, the body read capped as UTF-8 text, then relay.ingest.ts.
import { publicRoute, relayErrorFormat } from "./relay.openapi";
import { readBodyCapped, tooLargeMessage } from "../../platform/body";
import { ApiError } from "../../platform/errors";
import { dataResponse, jsonResponse } from "../../platform/openapi";
import { countBeside, ipKey } from "../../platform/rate-limit/middleware";
import { createRouter } from "../../platform/router";
import { loadIngestSource, receiveWebhook, type IngestSource } from "./relay.ingest";
import { IngestAcceptedSchema, MAX_BODY_BYTES, RelayErrorSchema, SlugParam } from "./relay.schemas";

export const ingestRouter = createRouter({ errorFormat: relayErrorFormat });

ingestRouter.openapi(
  publicRoute({
    method: "post",
    path: "/{slug}",
    operationId: "ingestWebhook",
    summary: "Public ingest address of a source",
    description:
      "No credential; the `public` bucket (200 requests per 60 s per client IP). Any content type; the body must be UTF-8 text of at most 1 MB (413 above, 415 when not UTF-8). When the source has a signing secret, the provider's signature is verified first (401, nothing stored). Duplicates of a provider event id answer 202 with `duplicate: true` and are not forwarded again. Unknown slug 404; disabled source 410; monthly `webhooks` quota exhausted 429 (an event costs one unit per started 64 KB of body); the source's forward cap reached 429 with `Retry-After` (at most `RELAY_FORWARDS_PER_MINUTE` deliveries, default 600, created per minute per source; nothing stored, retry later). Answers 202 once the event and its deliveries are stored; the first delivery attempt then starts at once, in the background of this request (the queue retries failures; a queue outage delays retries, never refuses an event).",
    // Read by the handler itself as UTF-8 text, at most 1 MB (readBody below).
    body: { own: MAX_BODY_BYTES },
    request: { params: SlugParam },
    responses: {
      202: dataResponse("Stored; the first delivery attempts have started", IngestAcceptedSchema),
      401: jsonResponse("Invalid webhook signature", RelayErrorSchema),
      404: jsonResponse("Source not found", RelayErrorSchema),
      410: jsonResponse("Source is disabled", RelayErrorSchema),
      413: jsonResponse(tooLargeMessage(MAX_BODY_BYTES), RelayErrorSchema),
      415: jsonResponse("Body is not UTF-8 text", RelayErrorSchema),
      429: jsonResponse("Rate limit exceeded (the per-IP bucket or the source's forward cap, with Retry-After), or monthly quota", RelayErrorSchema),
      503: jsonResponse("Could not store (the source's store or the usage meter unreachable); retry", RelayErrorSchema),
    },
  }),
  async (c) => {
    // The `public` bucket, the body and the source are independent I/O: all at once. The bucket's
    // count goes on beside the signature check and the quota units (receiveWebhook), and its
    // refusal still comes first: the order a sender expects is 429, then 413/415, then 404, then
    // the event's own answers. A refusal this isolate remembers answers before anything runs.
    const admitted = countBeside(c, "public", ipKey(c));
    const [body, found] = await Promise.allSettled([readBody(c.req.raw), loadIngestSource(c.env, c.req.valid("param").slug)]);
    for (const outcome of [body, found]) if (outcome.status === "rejected") throw (await admitted) ?? outcome.reason;
    const inbound = { headers: c.req.raw.headers, body: (body as PromiseFulfilledResult<string>).value, contentType: c.req.header("content-type") ?? null };
    const result = await receiveWebhook(c.env, (found as PromiseFulfilledResult<IngestSource>).value, inbound, c.executionCtx, admitted);
    return c.json({ data: result }, 202);
  },
);

const tooLarge = () => new ApiError("payload_too_large", tooLargeMessage(MAX_BODY_BYTES));

/** Reads the request body as UTF-8 text, refusing more than MAX_BODY_BYTES without buffering it all. */
async function readBody(request: Request): Promise<string> {
  const bytes = await readBodyCapped(request, MAX_BODY_BYTES, tooLarge);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ApiError("unsupported_media_type", "Body must be UTF-8 text");
  }
}
