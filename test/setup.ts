import { applyD1Migrations, env } from "cloudflare:test";

// Every test file starts from a migrated database.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
