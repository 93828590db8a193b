import type { Env as WorkerEnv } from "../src/env";
import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: D1Migration[];
      TEST_WRANGLER_JOBS: {
        consumers: { queue: string; max_retries: number | null; dead_letter_queue: string | null; max_batch_size: number | null }[];
        producers: { binding: string; queue: string }[];
        crons: string[];
        classes: string[];
      };
    }
  }
}

declare module "vitest" {
  // Provided by vitest.config.ts for test/hardening/budget.ts.
  export interface ProvidedContext {
    ci: boolean;
    hardeningFuzzRequests: string | null;
  }
}
