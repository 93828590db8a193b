// Small helpers for route declarations, so every product describes bodies the same way.
import { z } from "@hono/zod-openapi";

/** `{ "application/json": { schema } }` */
export function jsonContent<T extends z.ZodType>(schema: T) {
  return { "application/json": { schema } };
}

/** A required JSON request body. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: jsonContent(schema) };
}

/** The `{data: ...}` envelope of a schema. */
export function dataOf<T extends z.ZodType>(schema: T) {
  return z.object({ data: schema });
}

/** A JSON response in the `{data: ...}` envelope. */
export function dataResponse<T extends z.ZodType>(description: string, schema: T) {
  return { description, content: jsonContent(dataOf(schema)) };
}

/** A JSON response with a given schema, no envelope. */
export function jsonResponse<T extends z.ZodType>(description: string, schema: T) {
  return { description, content: jsonContent(schema) };
}

/** The auth error body of the specification (401, 403). */
export const AuthErrorSchema = z.object({ error: z.string() }).openapi("AuthError");

/** The rate-limit error body of the specification (429). */
export const RateLimitErrorSchema = z
  .object({ error: z.literal("Rate limit exceeded"), retry_after: z.number().int() })
  .openapi("RateLimitError");

/** 401, 403 and 429 responses shared by every authenticated route. */
export const authResponses = {
  401: jsonResponse("Invalid or missing API key", AuthErrorSchema),
  403: jsonResponse("Insufficient scope", AuthErrorSchema),
  429: jsonResponse("Rate limit exceeded (or monthly quota)", RateLimitErrorSchema),
};

/**
 * Path parameters routed and documented under `name` but handed to the handler as `key`.
 * OpenAPI forbids two path templates that differ only in a parameter's name (the authenticated
 * `GET /surveys/{id}/responses` and the public `POST /surveys/{slug}/responses`): both
 * operations declare the one shared name, each with its own description, while their handlers
 * keep reading `id` and `slug`. The URL itself is unchanged (any single path segment).
 */
export function pathParamAs<N extends string, K extends string>(name: N, key: K, description: string) {
  const shape = { [name]: z.string().openapi({ param: { name, in: "path", description } }) } as { [P in N]: z.ZodString };
  return z.object(shape).transform((params) => ({ [key]: (params as Record<string, string>)[name] }) as { [P in K]: string });
}
