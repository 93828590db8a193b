// The audit product's queue message (report-export): a leaf file, so src/env.ts types the queue
// without importing the consumer.
import { z } from "zod";
import { rowId } from "../../platform/jobs/row-id";
import { defineQueue } from "../../platform/jobs/queues";

/** The report-export message: ids only (Queue messages are small; the snapshot stays in D1). */
export const exportMessage = z.object({ report_id: rowId, team_id: rowId });
export type ExportMessage = z.infer<typeof exportMessage>;

/**
 * The queue of `ExportMessage` (wrangler.toml: max_retries = 5). Its claim: one render and one R2
 * put, two minutes; a failed render is final, so no attempt cap.
 */
export const exportQueue = defineQueue({ name: "report-export", binding: "EXPORT_QUEUE", maxRetries: 5, claim: { leaseMs: 2 * 60_000, maxAttempts: null } });

// The producer binding carries the message type, so a producer sending anything else fails the
// type-check (wrangler's generated types know only `Queue`).
declare module "../../env" {
  interface Env {
    EXPORT_QUEUE: Queue<ExportMessage>;
  }
}
