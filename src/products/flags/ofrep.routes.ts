// OFREP v0.3 (OpenFeature Remote Evaluation Protocol) at /ofrep/v1, so OpenFeature's OFREP providers
// work unchanged: `POST /ofrep/v1/evaluate/flags/{key}` and the bulk `POST /ofrep/v1/evaluate/flags`
// (ETag/304). With a client key: its buckets, the client-side flags of its environment. With a team
// key holding `flags:read`: the strict `flags` family, every flag, the environment from
// `X-Environment` (default `production`). Each evaluating call spends one `evaluations` unit (a 304
// none). Bodies are read here, so a body that is not JSON answers OFREP's PARSE_ERROR.
import { z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { every } from "hono/combine";
import type { AppEnv } from "../../env";
import { auth, bearerToken, requireAnyScope } from "../../platform/auth";
import { jsonResponse, productRoutes } from "../../platform/openapi";
import { rateLimit } from "../../platform/rate-limit/middleware";
import { createRouter } from "../../platform/router";
import { evaluateAll, evaluateFlag, type PreparedRuleset, type RulesetFlag } from "./evaluate";
import { isClientKey } from "./flags-client-keys.service";
import { authenticateClient, clientCors, withUnitSettled } from "./flags-client.middleware";
import { answerEtag, notModified, spendEvaluation } from "./flags-evaluate.service";
import { OfrepBulkSchema, OfrepErrorSchema, ofrepContext, ofrepEntry, OfrepSuccessSchema, type OfrepError } from "./flags-ofrep";
import { evaluationsNoted, noteInsights } from "./flags.insights";
import { rulesetOf } from "./flags.store";
import type { QuotaOwner } from "../../platform/quota";
import { keepAliveOf } from "../../platform/request-context";

/** OFREP bodies are a context: 64 KB is plenty (the context itself is capped at 16 KB elsewhere). */
const OFREP_BODY_BYTES = 64 * 1024;

const teamKey = every(auth({ strict: "flags", scopes: ["flags:read"] }), requireAnyScope("flags:read"), rateLimit({ bucket: "strict", family: "flags" }));

/** Either credential: a client key (`fck_…`) or a team API key with flags:read. */
const ofrepAuth: MiddlewareHandler<AppEnv> = async function ofrepAuth(c, next) {
  const token = bearerToken(c.req.header("authorization"));
  if (token && isClientKey(token)) {
    // Both OFREP routes evaluate: the unit is taken ahead with the key's counts.
    await authenticateClient(c, token, true);
    return withUnitSettled(c, next);
  }
  return teamKey(c, next);
};

const ErrorSchema = z.object({ error: z.string() }).openapi("OfrepAuthError");
const route = productRoutes({
  tags: ["OFREP"],
  security: [{ bearerAuth: ["flags:read"] }, { flagsClientKey: [] }],
  authenticate: ofrepAuth,
  body: OFREP_BODY_BYTES,
  errorBody: ErrorSchema,
  errors: {
    401: jsonResponse("Invalid or missing key", ErrorSchema),
    403: jsonResponse("The team key lacks flags:read, or the origin is not allowed for the client key", ErrorSchema),
    429: jsonResponse("Rate limit exceeded (with Retry-After), or the monthly quota", ErrorSchema),
  },
});

export const ofrepRouter = createRouter({ errorFormat: (error) => ({ error: error.message }) });
ofrepRouter.use("*", clientCors());

interface Caller {
  owner: QuotaOwner;
  environment: string;
  visible?: (flag: RulesetFlag) => boolean;
  /** Team keys mark flags evaluated (the stale list); client keys never do. */
  fresh: boolean;
  scope: string;
}

function callerOf(c: Context<AppEnv>): Caller {
  const client = c.get("flagsClient");
  if (client) return { owner: client, environment: client.environment, visible: (f) => f.client_side, fresh: false, scope: `client:${client.environment}` };
  const environment = c.req.header("x-environment") ?? "production";
  return { owner: c.get("principal"), environment, fresh: true, scope: `team:${environment}` };
}

/** The caller's ruleset, or the OFREP error of an unknown X-Environment. */
async function rulesetOrError(c: Context<AppEnv>, caller: Caller): Promise<PreparedRuleset | OfrepError> {
  const prepared = await rulesetOf(c.env, caller.owner.teamId, caller.environment, keepAliveOf(c));
  return prepared ?? { errorCode: "INVALID_CONTEXT", errorDetails: `no environment ${caller.environment}` };
}

const KeyParam = z.object({ key: z.string().openapi({ param: { name: "key", in: "path" } }) });
/** The request body, documented here and read by the handlers (ofrepContext). */
const OFREP_BODY = "Body `{context: {targetingKey, ...attributes}}` (JSON; read as is, so a body that is not JSON answers `PARSE_ERROR`).";

ofrepRouter.openapi(
  route({
    method: "post",
    path: "/evaluate/flags/{key}",
    operationId: "ofrepEvaluateFlag",
    summary: "Evaluate one flag (OFREP)",
    description: `${OFREP_BODY} Answers \`{key, value, reason, variant, metadata}\`; errors \`{key, errorCode, errorDetails}\`.`,
    // The body (OfrepEvaluationRequest) is read by the handler, so that a body that is not JSON answers OFREP's PARSE_ERROR.
    request: { params: KeyParam },
    responses: {
      200: jsonResponse("The evaluation", OfrepSuccessSchema),
      400: jsonResponse("PARSE_ERROR, TARGETING_KEY_MISSING or INVALID_CONTEXT", OfrepErrorSchema),
      404: jsonResponse("FLAG_NOT_FOUND", OfrepErrorSchema),
    },
  }),
  async (c) => {
    const key = c.req.param("key");
    const parsed = ofrepContext(await c.req.text());
    if ("error" in parsed) return c.json({ key, ...parsed.error }, 400);
    const caller = callerOf(c);
    const prepared = await rulesetOrError(c, caller);
    if (!("ruleset" in prepared)) return c.json({ key, ...prepared }, 400);
    await spendEvaluation(c, caller.owner);
    const evaluation = evaluateFlag(prepared, key, parsed.context, caller.visible);
    noteInsights(c.env, caller.owner.teamId, caller.environment, [{ flag: key, variant: evaluation.variant }], "evaluation", caller.fresh, keepAliveOf(c));
    const entry = ofrepEntry(key, evaluation, parsed.context);
    if ("errorCode" in entry) return c.json(entry, entry.errorCode === "FLAG_NOT_FOUND" ? 404 : 400);
    return c.json(entry, 200);
  },
);

ofrepRouter.openapi(
  route({
    method: "post",
    path: "/evaluate/flags",
    operationId: "ofrepEvaluateFlags",
    summary: "Evaluate every flag (OFREP bulk)",
    description: `${OFREP_BODY} Every flag the credential sees, \`{flags: [...]}\`, with \`ETag\`; \`If-None-Match\` with the same context and no change answers 304 (no unit spent).`,
    responses: {
      200: jsonResponse("The evaluations", OfrepBulkSchema),
      304: { description: "Not modified" },
      400: jsonResponse("PARSE_ERROR or INVALID_CONTEXT", OfrepErrorSchema),
    },
  }),
  async (c) => {
    const parsed = ofrepContext(await c.req.text());
    if ("error" in parsed) return c.json(parsed.error, 400);
    const caller = callerOf(c);
    const prepared = await rulesetOrError(c, caller);
    if (!("ruleset" in prepared)) return c.json(prepared, 400);
    const etag = answerEtag(prepared, caller.scope, parsed.context);
    if (notModified(c.req.header("if-none-match"), etag)) return c.body(null, 304, { etag });
    await spendEvaluation(c, caller.owner);
    const results = evaluateAll(prepared, parsed.context, undefined, caller.visible);
    noteInsights(c.env, caller.owner.teamId, caller.environment, evaluationsNoted(results), "evaluation", caller.fresh, keepAliveOf(c));
    return c.json({ flags: Object.entries(results).map(([key, e]) => ofrepEntry(key, e, parsed.context)) }, 200, { etag });
  },
);

ofrepRouter.use("*", ...route.unmatched());
