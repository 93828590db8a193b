// The audit-scans queue message: a leaf file, so src/env.ts types the queue without importing the
// consumer.
import { z } from "zod";
import { rowId } from "../../platform/jobs/row-id";
import { defineQueue } from "../../platform/jobs/queues";

/** A scan to run: ids only (the target and the results stay in D1). */
export const scanMessage = z.object({ scan_id: rowId, team_id: rowId });
export type ScanMessage = z.infer<typeof scanMessage>;

/**
 * The queue of `ScanMessage` (wrangler.toml: max_retries = 5). Its claim: the fetch ends within 10 s,
 * the grade and the findings write follow, so a minute's lease; 5 claims of one scan.
 */
export const scansQueue = defineQueue({ name: "audit-scans", binding: "SCAN_QUEUE", maxRetries: 5, claim: { leaseMs: 60_000, maxAttempts: 5 } });

// The producer binding carries the message type (wrangler's generated types know only `Queue`).
declare module "../../env" {
  interface Env {
    SCAN_QUEUE: Queue<ScanMessage>;
  }
}
