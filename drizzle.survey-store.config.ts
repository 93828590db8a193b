import { defineConfig } from "drizzle-kit";

// The schema of each survey's Durable Object store (src/products/surveys/store/). Migrations are
// generated for Drizzle's durable-sqlite driver and applied by the object itself when it starts.
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./src/products/surveys/store/survey-store.schema.ts",
  out: "./src/products/surveys/store/migrations",
});
