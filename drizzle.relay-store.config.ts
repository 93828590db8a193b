import { defineConfig } from "drizzle-kit";

// The schema of each relay source's Durable Object store (src/products/relay/store/). Migrations
// are generated for Drizzle's durable-sqlite driver and applied by the object itself when it starts.
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./src/products/relay/store/relay-store.schema.ts",
  out: "./src/products/relay/store/migrations",
});
