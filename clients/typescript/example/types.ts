// Uses of the client that must NOT compile. Each `@ts-expect-error` fails the build when its line
// compiles after all (TS2578), so this file fails whenever the package's types degrade to `any`
// (an unresolved import inside the package, hidden by skipLibCheck) or stop checking a path,
// a body or an answer. scripts/check-client-package.mjs compiles it in every configuration.
import { createClient, type Schemas } from "@edge-platform/client";
import type { components } from "@edge-platform/client/schema";

const api = createClient("http://localhost:8787", "edp_key");

export async function wrongUses(): Promise<void> {
  // @ts-expect-error: not a path of the API
  await api.GET("/api/v1/no-such-path", {});
  // @ts-expect-error: a log project needs a name
  await api.POST("/api/v1/logs/projects", { body: { retention_days: 3 } });
  // @ts-expect-error: the name is a string
  await api.POST("/api/v1/logs/projects", { body: { name: 42 } });
  // @ts-expect-error: the path parameter is `id`
  await api.GET("/api/v1/logs/projects/{id}", { params: { path: { project: "lgp_1" } } });

  const { data } = await api.GET("/api/v1/usage");
  if (!data) return;
  const plan: string = data.data.plan;
  // @ts-expect-error: the plan is a string
  const wrong: number = data.data.plan;
  // @ts-expect-error: Usage has no such field
  console.log(plan, wrong, data.data.no_such_field);

}

export function wrongRead(project: Schemas["LogProject"]): components["schemas"]["LogProject"] {
  // @ts-expect-error: a listed project carries no token, only its prefix
  console.log(project.ingest_token);
  return project;
}
