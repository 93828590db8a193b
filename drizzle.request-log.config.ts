import { defineConfig } from "drizzle-kit";

// The schema of each team's request log Durable Object (src/platform/request-log/). Migrations are
// generated for Drizzle's durable-sqlite driver and applied by the object itself when it starts.
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./src/platform/request-log/request-log.schema.ts",
  out: "./src/platform/request-log/migrations",
});
