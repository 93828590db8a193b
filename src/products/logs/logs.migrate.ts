// The one-time move of log entries from the former D1 table (`log_entries`, where every project's
// entries lived before the per-project stores) into each project's store. The operator runs it in
// steps (POST /api/v1/admin/logs/migrate-entries) until `more` is false. Each step reads the oldest
// rows, imports each project's share into its store, then deletes what was imported. A step that
// stops between import and delete repeats nothing: each store records the ids it imported.
import { log } from "../../platform/log";
import type { Env } from "../../env";
import { ApiError } from "../../platform/errors";
import { logStore, type StoreRow } from "./logs.store";
import type { EntryRecord } from "./store/log-store";
import { deleteLegacyEntries, selectLegacyEntries } from "./logs.queries";

/** Rows per step: an entry may hold 64 KB of message and metadata, so a step stays well inside a Worker's memory. */
export const MIGRATE_MAX_ROWS = 1_000;

/** A row of the former table: the fields of an entry as the stores keep them (all but `ts`), plus its project. */
interface LegacyRow extends Omit<EntryRecord, "ts"> {
  project_id: string;
  retention_days: number | null;
}

/** One step: moves up to `limit` of the oldest D1 rows. `dropped` counts rows of projects that no longer exist. */
export async function migrateLegacyEntries(env: Env, limit: number): Promise<{ moved: number; dropped: number; more: boolean }> {
  const results = await selectLegacyEntries<LegacyRow>(env.DB, limit);
  const byProject = new Map<string, LegacyRow[]>();
  const orphans: number[] = [];
  for (const row of results) {
    if (row.retention_days === null) orphans.push(row.seq);
    else byProject.set(row.project_id, [...(byProject.get(row.project_id) ?? []), row]);
  }
  const imported = await Promise.allSettled(
    [...byProject].map(async ([projectId, rows]) => {
      await logStore(env, projectId).importLegacy(
        rows.map((r): StoreRow => [r.id, r.stream, r.level, r.message, r.service, r.trace_id, r.span_id, r.metadata, r.created_at, r.created_at]),
        { retentionDays: rows[0].retention_days! },
      );
      return rows.map((r) => r.seq);
    }),
  );
  const done = imported.flatMap((result) => (result.status === "fulfilled" ? result.value : []));
  const seqs = [...done, ...orphans];
  if (seqs.length > 0) await deleteLegacyEntries(env.DB, seqs);
  const failed = imported.find((result) => result.status === "rejected");
  if (failed) {
    log.error("log entry migration: a store did not answer", { error: String((failed as PromiseRejectedResult).reason) });
    throw new ApiError("unavailable", "A log store did not answer; what was moved is recorded, run the step again");
  }
  return { moved: done.length, dropped: orphans.length, more: results.length === limit };
}
