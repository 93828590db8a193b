import { defineConfig } from "drizzle-kit";

// SQL migrations are generated from the TypeScript schema into migrations/ and applied with
// `wrangler d1 migrations apply` (dev) or `applyD1Migrations` (tests).
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema/index.ts",
  out: "./migrations",
});
