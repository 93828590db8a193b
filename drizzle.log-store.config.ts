import { defineConfig } from "drizzle-kit";

// The schema of each log project's Durable Object store (src/products/logs/store/). Migrations are
// generated for Drizzle's durable-sqlite driver and applied by the object itself when it starts.
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./src/products/logs/store/log-store.schema.ts",
  out: "./src/products/logs/store/migrations",
});
