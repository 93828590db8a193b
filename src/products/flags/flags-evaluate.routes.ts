// The evaluating side of the flags server API (team API key): the ruleset for local evaluation
// (default bucket, ETag/304), and evaluate, bootstrap and track in the team's strict `flags`
// family. Evaluate and bootstrap spend one `evaluations` unit per call; a 304 and the ruleset none.
// Evaluations read the isolate's cached ruleset (flags.store.ts): no D1 read, no store call while
// its revision is current.
import { z } from "@hono/zod-openapi";
import { dataResponse, jsonBody, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { evaluateAll } from "./evaluate";
import { ContextSchema, entriesOf, rulesetFor, spendEvaluation } from "./flags-evaluate.service";
import { recordTrack, TrackEvents } from "./flags-track";
import { evaluationsNoted, noteInsights } from "./flags.insights";
import { FlagsErrorSchema, flagsInvalid, flagsRoute as route } from "./flags.openapi";
import { EnvKey } from "./flags.schemas";
import { keepAliveOf } from "../../platform/request-context";

export const flagsEvaluateRouter = createRouter();

const EntrySchema = z
  .object({
    value: z.unknown(),
    variant: z.string().nullable(),
    reason: z.enum(["DISABLED", "TARGETING_MATCH", "SPLIT", "DEFAULT", "ERROR"]),
    version: z.number().int().nullable(),
    error_code: z.literal("FLAG_NOT_FOUND").optional(),
  })
  .openapi("FlagEvaluation");
const EvaluationsSchema = z.object({ flags: z.record(z.string(), EntrySchema) });
const envNotFound = { 404: jsonResponse("Environment not found", FlagsErrorSchema) };

const RulesetSchema = z
  .object({ environment: z.string(), version: z.number().int(), flags: z.record(z.string(), z.unknown()), segments: z.record(z.string(), z.unknown()) })
  .openapi("FlagRuleset", { description: "Everything local evaluation needs: each flag with this environment's configuration (`config`), and every segment." });

flagsEvaluateRouter.openapi(
  route({
    method: "get",
    path: "/ruleset",
    operationId: "getFlagRuleset",
    scope: "flags:read",
    summary: "An environment's ruleset",
    description:
      "The whole ruleset (flags and segments) for local evaluation (clients/openfeature), with `ETag` (its version); `If-None-Match` with it answers 304 while nothing changed. Counted in the default bucket; spends no `evaluations` unit.",
    request: { query: z.object({ environment: EnvKey.default("production") }) },
    responses: { 200: dataResponse("The ruleset", RulesetSchema), 304: { description: "Not modified" }, ...envNotFound, ...flagsInvalid },
  }),
  async (c) => {
    const prepared = await rulesetFor(c.env, c.get("principal").teamId, c.req.valid("query").environment, keepAliveOf(c));
    const etag = `"${prepared.ruleset.version}"`;
    const asked = c.req.header("if-none-match");
    if (asked && asked.split(",").some((t) => t.trim() === etag || t.trim() === `W/${etag}`)) return c.body(null, 304, { etag });
    return c.json({ data: prepared.ruleset }, 200, { etag });
  },
);

const EvaluateSchema = z
  .strictObject({
    environment: EnvKey,
    context: ContextSchema,
    flags: z.array(z.string().max(64)).min(1).max(500, "has more than 500 flags").optional(),
  })
  .openapi("EvaluateFlags");

flagsEvaluateRouter.openapi(
  route({
    method: "post",
    path: "/evaluate",
    operationId: "evaluateFlags",
    scope: "flags:read",
    strict: "flags",
    summary: "Evaluate flags for a context",
    description:
      '`flags` (default: every flag of the environment) for the context. An unknown key answers `reason: "ERROR", error_code: "FLAG_NOT_FOUND"`. Strict bucket (`flags` family); one `evaluations` unit per call.',
    request: { body: jsonBody(EvaluateSchema, { environment: "production", context: { key: "user-1", country: "FR" } }) },
    responses: { 200: dataResponse("Evaluations by flag key", EvaluationsSchema), ...envNotFound, ...flagsInvalid },
  }),
  async (c) => {
    const principal = c.get("principal");
    const { environment, context, flags } = c.req.valid("json");
    const keepAlive = keepAliveOf(c);
    const prepared = await rulesetFor(c.env, principal.teamId, environment, keepAlive);
    await spendEvaluation(c, principal);
    const results = evaluateAll(prepared, context, flags);
    noteInsights(c.env, principal.teamId, environment, evaluationsNoted(results), "evaluation", true, keepAlive);
    return c.json({ data: { flags: entriesOf(results) } }, 200);
  },
);

flagsEvaluateRouter.openapi(
  route({
    method: "post",
    path: "/bootstrap",
    operationId: "bootstrapFlags",
    scope: "flags:read",
    strict: "flags",
    summary: "Every flag for a context",
    description:
      "Every flag of the environment evaluated for the context (server-side rendering). Strict bucket (`flags` family); one `evaluations` unit per call.",
    request: {
      body: jsonBody(z.strictObject({ environment: EnvKey, context: ContextSchema }).openapi("BootstrapFlags"), {
        environment: "production",
        context: { key: "user-1" },
      }),
    },
    responses: { 200: dataResponse("Evaluations by flag key", EvaluationsSchema), ...envNotFound, ...flagsInvalid },
  }),
  async (c) => {
    const principal = c.get("principal");
    const { environment, context } = c.req.valid("json");
    const keepAlive = keepAliveOf(c);
    const prepared = await rulesetFor(c.env, principal.teamId, environment, keepAlive);
    await spendEvaluation(c, principal);
    const results = evaluateAll(prepared, context);
    noteInsights(c.env, principal.teamId, environment, evaluationsNoted(results), "evaluation", true, keepAlive);
    return c.json({ data: { flags: entriesOf(results) } }, 200);
  },
);

flagsEvaluateRouter.openapi(
  route({
    method: "post",
    path: "/track",
    operationId: "trackFlagEvents",
    scope: "flags:write",
    strict: "flags",
    summary: "Track exposures and custom events",
    description:
      "1 to 100 events. An exposure (`flag`, `variant`) counts in the flag's insights and marks it evaluated (local evaluation reports here); a custom event counts per `name` and hour. Events of unknown flags or variants are dropped. Strict bucket; spends no unit.",
    request: {
      body: jsonBody(z.strictObject({ environment: EnvKey, events: TrackEvents }).openapi("TrackFlagEvents"), {
        environment: "production",
        events: [{ kind: "custom", name: "checkout", context_key: "user-1", value: 42 }],
      }),
    },
    responses: { 202: dataResponse("Accepted", z.object({ accepted: z.number().int() })), ...envNotFound, ...flagsInvalid },
  }),
  async (c) => {
    const principal = c.get("principal");
    const { environment, events } = c.req.valid("json");
    const keepAlive = keepAliveOf(c);
    const prepared = await rulesetFor(c.env, principal.teamId, environment, keepAlive);
    const accepted = recordTrack(c.env, principal.teamId, prepared, events, { visible: () => true, fresh: true, keepAlive });
    return c.json({ data: { accepted } }, 202);
  },
);
