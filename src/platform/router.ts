// One router factory for every product: an OpenAPIHono whose validation hook throws the platform's
// ApiError, so each product's registered formatter renders the failure in its own body shape.
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { ApiError, zodDetails } from "./errors";

/** A product router; its routes land in the generated OpenAPI document. */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw ApiError.validation(zodDetails(result.error));
    },
  });
}

/** Security requirement for routes authenticated with a team API key. */
export const bearerSecurity = [{ bearerAuth: [] }];

/**
 * Security requirement of public routes: an explicit empty list, so the document states "no
 * credential" instead of leaving it unsaid (client generators and linters read a missing
 * `security` as "unknown").
 */
export const publicSecurity: Array<Record<string, string[]>> = [];
