// Runs around every test file: each file starts from empty storage, a migrated database and the
// real clock, and ends with its requests' background work done, so no test depends on what
// another file left behind.
//
// The test files share one runner (vitest.config.ts: isolate false), so the app's modules load
// once per run instead of once per file (that load was about half of the run's time). What a
// fresh runner used to give each file is done here instead:
// - reset() deletes the storage of every evictable Durable Object of the runtime: D1 and R2 (which
//   miniflare keeps in such objects) and the app's own objects (rate limiter, log store);
// - the migrations then rebuild the schema in the emptied D1;
// - the clock hook goes back to real time in case a failed test left it pinned;
// - queue messages and waitUntil work of earlier files are kept away (test/helpers/isolation.ts).
// Spies are restored by vitest itself after each file (vi.restoreAllMocks).
import { applyD1Migrations, env, reset } from "cloudflare:test";
import { afterAll } from "vitest";
import { setClock } from "../src/platform/clock";
import { settleRequests, startFile } from "./helpers/isolation";

startFile();
setClock(null);
await reset();
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

afterAll(settleRequests);
