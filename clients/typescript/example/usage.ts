// The client in a TypeScript project: compile with `tsc` (tsconfig.json beside this file, as a
// project with "type": "module" would have it) and run the output with Node 18 or later:
//   EDGE_KEY=edp_... node dist/usage.js        (EDGE_URL defaults to http://localhost:8787)
// Node 20 runs no .ts file itself; Node 22.18+ can (`node usage.ts`), the same code.
// scripts/check-client-package.mjs compiles and runs this file from the packed package.
import { createClient, EdgePlatformError, orThrow, type Schemas } from "@edge-platform/client";

const api = createClient(process.env.EDGE_URL ?? "http://localhost:8787", process.env.EDGE_KEY);

// orThrow: the body of a 2xx answer, or an EdgePlatformError. Paths, parameters, bodies and
// answers are all typed from the API's OpenAPI document.
const { data: usage } = await orThrow(api.GET("/api/v1/usage"));
console.log(`plan ${usage.plan}, month ends ${usage.period_end}`);
for (const [service, counter] of Object.entries(usage.services)) {
  console.log(`  ${service}: ${counter.used} ${counter.metric}${counter.unlimited ? "" : ` of ${counter.limit}`}`);
}

// Or without exceptions: { data, error, response }, each typed per status.
const { data: projects, error, response } = await api.GET("/api/v1/logs/projects");
if (error) console.error(`listing log projects: ${response.status} ${error.error}`);
else {
  const names: Schemas["LogProject"]["name"][] = projects.data.map((project) => project.name);
  console.log(`log projects: ${names.join(", ") || "none yet"}`);
}

try {
  await orThrow(api.GET("/api/v1/logs/projects/{id}", { params: { path: { id: "lgp_missing" } } }));
} catch (e) {
  if (!(e instanceof EdgePlatformError)) throw e;
  console.log(`a missing project: ${e.status} (${e.message})`);
}
