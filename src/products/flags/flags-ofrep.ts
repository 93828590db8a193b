// The OpenFeature Remote Evaluation Protocol's shapes (OFREP v0.3), shared by the OFREP routes and
// the client bootstrap (which answers in the bulk shape): a success `{key, value, reason, variant,
// metadata}`, an error `{key, errorCode, errorDetails}`. A flag that needs the context's key (a
// rollout bucketed by `key`) answers TARGETING_KEY_MISSING when the context has none; the other
// paths serve the first variation then, as the bucketing rule says.
import { z } from "@hono/zod-openapi";
import { type Context, contextKey, type Evaluation } from "./evaluate";

export type OfrepErrorCode = "PARSE_ERROR" | "TARGETING_KEY_MISSING" | "INVALID_CONTEXT" | "FLAG_NOT_FOUND" | "GENERAL";

export interface OfrepSuccess {
  key: string;
  value: unknown;
  reason: string;
  variant: string;
  metadata: Record<string, string | number | boolean>;
}
export interface OfrepError {
  key?: string;
  errorCode: OfrepErrorCode;
  errorDetails: string;
}

export const OfrepSuccessSchema = z
  .object({
    key: z.string(),
    value: z.unknown(),
    reason: z.string(),
    variant: z.string(),
    metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  })
  .openapi("OfrepEvaluationSuccess");
export const OfrepErrorSchema = z
  .object({ key: z.string().optional(), errorCode: z.string(), errorDetails: z.string() })
  .openapi("OfrepEvaluationFailure", { description: "`errorCode`: PARSE_ERROR, TARGETING_KEY_MISSING, INVALID_CONTEXT (400) or FLAG_NOT_FOUND (404)." });
export const OfrepBulkSchema = z.object({ flags: z.array(z.union([OfrepSuccessSchema, OfrepErrorSchema])) }).openapi("OfrepBulkEvaluation");

/** The OFREP entry of one evaluation. */
export function ofrepEntry(key: string, evaluation: Evaluation, context: Context): OfrepSuccess | OfrepError {
  if (evaluation.error_code === "FLAG_NOT_FOUND") return { key, errorCode: "FLAG_NOT_FOUND", errorDetails: "flag not found" };
  if (evaluation.bucket_missing === "key" && contextKey(context) === undefined) {
    return { key, errorCode: "TARGETING_KEY_MISSING", errorDetails: `flag ${key} is a rollout by the context's key: send targetingKey` };
  }
  return { key, value: evaluation.value, reason: evaluation.reason, variant: evaluation.variant!, metadata: { version: evaluation.version! } };
}

/** The context of an OFREP body (`{context: {targetingKey, ...}}`), or the error it answers. */
export function ofrepContext(text: string): { context: Context } | { error: OfrepError } {
  let body: unknown;
  try {
    body = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return { error: { errorCode: "PARSE_ERROR", errorDetails: "the body is not JSON" } };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return { error: { errorCode: "PARSE_ERROR", errorDetails: "the body must be a JSON object" } };
  const context = (body as { context?: unknown }).context ?? {};
  if (typeof context !== "object" || context === null || Array.isArray(context))
    return { error: { errorCode: "INVALID_CONTEXT", errorDetails: "context must be an object" } };
  const key = (context as Context).targetingKey;
  if (key !== undefined && typeof key !== "string") return { error: { errorCode: "INVALID_CONTEXT", errorDetails: "targetingKey must be a string" } };
  return { context: context as Context };
}
