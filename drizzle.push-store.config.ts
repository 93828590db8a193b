import { defineConfig } from "drizzle-kit";

// The schema of each push app's Durable Object store (src/products/push/store/). Migrations are
// generated for Drizzle's durable-sqlite driver and applied by the object itself when it starts.
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./src/products/push/store/push-store.schema.ts",
  out: "./src/products/push/store/migrations",
});
