import { defineConfig } from "drizzle-kit";

// The schema of each form's Durable Object store (src/products/forms/store/). Migrations are
// generated for Drizzle's durable-sqlite driver and applied by the object itself when it starts.
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./src/products/forms/store/form-store.schema.ts",
  out: "./src/products/forms/store/migrations",
});
