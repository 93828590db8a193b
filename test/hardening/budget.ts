// How many requests the hardening sweeps send, in one place. CI (CI=true, as .ci/run sets it) runs
// the full fuzz; a local run sends fewer generated requests unless it asks for a count with
// HARDENING_FUZZ_REQUESTS (e.g. `HARDENING_FUZZ_REQUESTS=10000 npm run test:unit -- test/hardening`).
// vitest.config.ts reads both variables on the Node side and provides them to the tests, which run
// inside workerd and cannot see the process environment.
//
// The route-wide sweeps of routes.security.test.ts have no count: they cover every route of the
// OpenAPI document on every run, locally too (about 2 s).
import { inject } from "vitest";

/** Generated fuzz requests across all operations in CI. */
export const CI_FUZZ_REQUESTS = 10_000;
/** Generated fuzz requests across all operations in a local run. */
export const LOCAL_FUZZ_REQUESTS = 2_000;

function fuzzRequests(): number {
  const asked = inject("hardeningFuzzRequests");
  if (asked !== null) {
    const n = Number(asked);
    if (!Number.isInteger(n) || n < 1) throw new Error(`HARDENING_FUZZ_REQUESTS must be a positive integer, got ${JSON.stringify(asked)}`);
    return n;
  }
  return inject("ci") ? CI_FUZZ_REQUESTS : LOCAL_FUZZ_REQUESTS;
}

/** Total generated requests of fuzz.test.ts (its fixed cases come on top). */
export const FUZZ_REQUESTS = fuzzRequests();
