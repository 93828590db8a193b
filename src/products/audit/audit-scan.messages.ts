// The audit-scans queue message: a leaf file, so src/env.ts types the queue without importing the
// consumer.
import { z } from "zod";
import { rowId } from "../../platform/jobs/row-id";

/** A scan to run: ids only (the target and the results stay in D1). */
export const scanMessage = z.object({ scan_id: rowId, team_id: rowId });
export type ScanMessage = z.infer<typeof scanMessage>;
