import { defineConfig } from "drizzle-kit";

// The schema of each analytics site's Durable Object store (src/products/analytics/store/).
// Migrations are generated for Drizzle's durable-sqlite driver and applied by the object itself.
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./src/products/analytics/store/analytics-store.schema.ts",
  out: "./src/products/analytics/store/migrations",
});
