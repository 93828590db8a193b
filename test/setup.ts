import { applyD1Migrations, env } from "cloudflare:test";
// The product list registers the products with the platform (scopes, services, queues), as the
// Worker's entry does.
import "../src/products";

// Every test file starts from a migrated database.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
