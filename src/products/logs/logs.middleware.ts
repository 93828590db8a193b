// Ingest-token authentication for the two log ingest endpoints. They take a project ingest token,
// never a team API key (spec: Authentication 5), and count requests in the `log_ingest` bucket
// keyed on the token's hash (300 per 60 s per token).
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import { bearerToken } from "../../platform/auth";
import { ApiError } from "../../platform/errors";
import { ipKey, enforceBucket } from "../../platform/rate-limit/middleware";
import { findProjectByToken, INGEST_MESSAGES, type IngestProject } from "./logs.ingest";

declare module "hono" {
  interface ContextVariableMap {
    ingestProject?: IngestProject;
  }
}

/** Resolves `Authorization: Bearer <ingest token>` to its project, then applies the log_ingest bucket. */
export function ingestAuth(): MiddlewareHandler<AppEnv> {
  return async function ingestAuthMiddleware(c, next) {
    const token = bearerToken(c.req.header("authorization"));
    const project = token ? await findProjectByToken(c.env.DB, token) : null;
    if (!project) {
      // Unknown credentials are counted per IP, like a bad API key.
      await enforceBucket(c, "anonymous", ipKey(c));
      throw ApiError.unauthorized(INGEST_MESSAGES.badToken);
    }
    c.set("ingestProject", project);
    await enforceBucket(c, "log_ingest", `token:${project.tokenHash}`);
    await next();
  };
}

/** The project resolved by ingestAuth(). */
export function ingestProject(c: { get(key: "ingestProject"): IngestProject | undefined }): IngestProject {
  const project = c.get("ingestProject");
  if (!project) throw ApiError.unauthorized(INGEST_MESSAGES.badToken);
  return project;
}
