// The flags client API under /api/v1/flags/client (client key `fck_…`; flags-client.middleware.ts):
// bootstrap (the client-side flags of the key's environment for a context, in OFREP's bulk shape,
// ETag/304), track (exposures and custom events; never marks a flag fresh) and an optional
// Server-Sent Events stream saying when to fetch again. One `evaluations` unit per bootstrap (none
// for a 304, a track or the stream).
import { z } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import { nowMs } from "../../platform/clock";
import { jsonBody, jsonResponse, productRoutes } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { evaluateAll, type RulesetFlag } from "./evaluate";
import { resolveClientKey } from "./flags-client-keys.service";
import { clientCors, clientKeyAuth, clientOf } from "./flags-client.middleware";
import { answerEtag, ContextSchema, notModified, rulesetFor, spendEvaluation } from "./flags-evaluate.service";
import { OfrepBulkSchema, ofrepEntry } from "./flags-ofrep";
import { recordTrack, TrackEvents } from "./flags-track";
import { evaluationsNoted, noteInsights } from "./flags.insights";
import { rulesetOf, RULESET_REVALIDATE_MS } from "./flags.store";
import { bearerToken } from "../../platform/auth";
import { keepAliveOf } from "../../platform/request-context";

const ErrorSchema = z.object({ error: z.string() }).openapi("FlagsClientError");
const clientRoutes = {
  tags: ["Feature flags (client)"],
  security: [{ flagsClientKey: [] }],
  errorBody: ErrorSchema,
  errors: {
    401: jsonResponse("Invalid or missing client key (a team API key answers 401 here)", ErrorSchema),
    403: jsonResponse("The browser's origin is not in the key's allowed_origins", ErrorSchema),
    429: jsonResponse("Rate limit exceeded (flags_client_ip, then flags_client), or the monthly quota", ErrorSchema),
  },
};
const route = productRoutes({ ...clientRoutes, authenticate: clientKeyAuth() });
/** Routes that spend an `evaluations` unit (unless they answer 304): taken ahead with the key's counts. */
const evaluatingRoute = productRoutes({ ...clientRoutes, authenticate: clientKeyAuth({ evaluates: true }) });

export const flagsClientRouter = createRouter({
  errorFormat: (error) => (error.details ? { error: error.message, details: error.details } : { error: error.message }),
});
flagsClientRouter.openAPIRegistry.registerComponent("securitySchemes", "flagsClientKey", {
  type: "http",
  scheme: "bearer",
  description: "A flags client key (`fck_...`) of one environment, created with POST /flags/environments/{env}/client-keys and shown once.",
});
flagsClientRouter.use("*", clientCors());

const clientSide = (flag: RulesetFlag) => flag.client_side;

flagsClientRouter.openapi(
  evaluatingRoute({
    method: "post",
    path: "/bootstrap",
    operationId: "clientBootstrapFlags",
    summary: "Client-side flags for a context",
    description:
      "Every `client_side` flag of the key's environment evaluated for the context, in OFREP's bulk shape, with `ETag`; `If-None-Match` with the same context and no change answers 304 (no unit spent).",
    request: { body: jsonBody(z.strictObject({ context: ContextSchema }).openapi("ClientBootstrap"), { context: { key: "user-1" } }) },
    responses: { 200: jsonResponse("Evaluations", OfrepBulkSchema), 304: { description: "Not modified" } },
  }),
  async (c) => {
    const client = clientOf(c);
    const { context } = c.req.valid("json");
    const keepAlive = keepAliveOf(c);
    const prepared = await rulesetFor(c.env, client.teamId, client.environment, keepAlive);
    const etag = answerEtag(prepared, `client:${client.environment}`, context);
    if (notModified(c.req.header("if-none-match"), etag)) return c.body(null, 304, { etag });
    await spendEvaluation(c, client);
    const results = evaluateAll(prepared, context, undefined, clientSide);
    noteInsights(c.env, client.teamId, client.environment, evaluationsNoted(results), "evaluation", false, keepAlive);
    return c.json({ flags: Object.entries(results).map(([key, e]) => ofrepEntry(key, e, context)) }, 200, { etag });
  },
);

flagsClientRouter.openapi(
  route({
    method: "post",
    path: "/track",
    operationId: "clientTrackFlagEvents",
    summary: "Track exposures and custom events from a client",
    description:
      "1 to 100 events; exposures of the environment's client-side flags count in their insights (never marking a flag fresh: a browser's events are untrusted).",
    request: {
      body: jsonBody(z.strictObject({ events: TrackEvents }).openapi("ClientTrack"), { events: [{ kind: "custom", name: "signup", context_key: "user-1" }] }),
    },
    responses: { 202: jsonResponse("Accepted", z.object({ accepted: z.number().int() })) },
  }),
  async (c) => {
    const client = clientOf(c);
    const keepAlive = keepAliveOf(c);
    const prepared = await rulesetFor(c.env, client.teamId, client.environment, keepAlive);
    const accepted = recordTrack(c.env, client.teamId, prepared, c.req.valid("json").events, { visible: clientSide, fresh: false, keepAlive });
    return c.json({ accepted }, 202);
  },
);

/** How long one stream stays open (EventSource reconnects by itself). */
export const STREAM_MAX_MS = 5 * 60_000;

flagsClientRouter.openapi(
  route({
    method: "get",
    path: "/stream",
    operationId: "clientFlagStream",
    summary: "When to fetch again (Server-Sent Events)",
    description:
      "`?key=fck_…` (an EventSource sends no headers). Sends `event: ready` with the ruleset version, then `event: changed` whenever the environment's flags change (checked every 5 s); bootstrap again on `changed`. Closes after 5 minutes (EventSource reconnects), and within 5 s of the key's deletion.",
    request: { query: z.object({ key: z.string().optional() }) },
    responses: { 200: { description: "text/event-stream" } },
  }),
  async (c) => {
    const client = clientOf(c);
    const token = bearerToken(c.req.header("authorization")) ?? c.req.query("key") ?? "";
    return streamSSE(c, async (stream) => {
      const started = nowMs();
      let version = (await rulesetOf(c.env, client.teamId, client.environment))?.ruleset.version ?? 0;
      await stream.writeSSE({ event: "ready", data: JSON.stringify({ version }) });
      while (!stream.aborted && nowMs() - started < STREAM_MAX_MS) {
        await stream.sleep(RULESET_REVALIDATE_MS);
        if (!(await resolveClientKey(c.env, token))) break;
        const now = (await rulesetOf(c.env, client.teamId, client.environment))?.ruleset.version ?? 0;
        if (now !== version) {
          version = now;
          await stream.writeSSE({ event: "changed", data: JSON.stringify({ version }) });
        }
      }
    });
  },
);

flagsClientRouter.use("*", ...route.unmatched());
