import { defineConfig } from "drizzle-kit";

// The schema of each team's flag store (src/products/flags/store/). Migrations are generated for
// Drizzle's durable-sqlite driver and applied by the object itself when it starts.
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./src/products/flags/store/flag-store.schema.ts",
  out: "./src/products/flags/store/migrations",
});
