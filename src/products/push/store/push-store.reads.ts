// The push store's reads of deliveries, as functions over its SQLite (push-store.ts's methods call
// them): a notification's counts per status and completion, a page of its per-subscriber results,
// and where a restarted fan-out resumes. Id lists are one bound JSON array (json_each).
import { COMPLETIONS, COUNTS_BY_STATUS, FANOUT_PROGRESS, resultPageSql } from "./push-store.queries";
import type { DeliveryRecord } from "./push-store.types";

/** What the store knows of a notification: its delivery rows per status, and when it completed. */
export interface NotificationSummary {
  id: string;
  counts: Record<string, number>;
  completedAt: string | null;
}

export function summaryRows(sql: SqlStorage, ids: string[]): NotificationSummary[] {
  const list = JSON.stringify(ids);
  const out = new Map<string, NotificationSummary>(ids.map((id) => [id, { id, counts: {}, completedAt: null }]));
  for (const r of sql.exec<{ id: string; status: string; n: number }>(COUNTS_BY_STATUS, list)) {
    out.get(r.id)!.counts[r.status] = r.n;
  }
  for (const r of sql.exec<{ id: string; completed_at: string | null }>(COMPLETIONS, list)) {
    out.get(r.id)!.completedAt = r.completed_at;
  }
  return [...out.values()];
}

export function resultRows(sql: SqlStorage, notificationId: string, query: { status?: string; cursor?: string; limit: number }): DeliveryRecord[] {
  return sql
    .exec<DeliveryRecord & Record<string, SqlStorageValue>>(
      resultPageSql(Boolean(query.status)),
      notificationId,
      query.cursor ?? "",
      ...(query.status ? [query.status] : []),
      query.limit,
    )
    .toArray()
    .map((r) => ({ ...r }));
}

export function progressRows(sql: SqlStorage, ids: string[]): Record<string, string | null> {
  const out: Record<string, string | null> = Object.fromEntries(ids.map((id) => [id, null]));
  for (const r of sql.exec<{ id: string; last: string }>(FANOUT_PROGRESS, JSON.stringify(ids))) {
    out[r.id] = r.last;
  }
  return out;
}
