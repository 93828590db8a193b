// The audit product's queue message (report-export): a leaf file, so src/env.ts types the queue
// without importing the consumer.
import { z } from "zod";
import { rowId } from "../../platform/jobs/row-id";

/** The report-export message: ids only (Queue messages are small; the snapshot stays in D1). */
export const exportMessage = z.object({ report_id: rowId, team_id: rowId });
export type ExportMessage = z.infer<typeof exportMessage>;
