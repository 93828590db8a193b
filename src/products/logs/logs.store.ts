// The Worker's side of the per-project log store (store/log-store.ts): the stub of a project's
// object, and entries packed as the JSON-array chunks its append and import take.
import { namedObject } from "../../platform/durable-objects";
import type { Env } from "../../env";
import { jsonChunks } from "../../platform/json-chunks";
import type { LogLevel } from "../../db/schema/logs";
import type { LogEntryInput } from "./logs.schemas";
import type { EntryRecord } from "./store/log-store";

/** The store of one project: one object per project id, wherever Cloudflare places it. */
export function logStore(env: Env, projectId: string): DurableObjectStub<import("./store/log-store").LogStore> {
  return namedObject(env.LOG_STORE, projectId);
}

/** A row of the store's append: [id, stream, level, message, service, trace_id, span_id, metadata, ts, created_at?]. */
export type StoreRow = [string, string | null, string, string, string | null, string | null, string | null, string | null, number, number?];

/** The stored row of an accepted entry at time `ts` (created_at is left to the append: the receive time). */
export function entryRow(entry: LogEntryInput, ts: number): StoreRow {
  return [
    crypto.randomUUID(),
    entry.stream ?? null,
    (entry.level ?? "info") satisfies LogLevel,
    entry.message,
    entry.service ?? null,
    entry.trace_id ?? null,
    entry.span_id ?? null,
    entry.metadata ? JSON.stringify(entry.metadata) : null,
    ts,
  ];
}

/** Rows as JSON arrays, joined into chunks the store's insert takes (platform/json-chunks.ts). */
export function rowChunks(rows: Iterable<StoreRow>): string[] {
  return jsonChunks(rows);
}

/** An entry as the API answers it (the entry query, and each event of a live tail). */
export function entryView(projectId: string, row: EntryRecord) {
  return {
    id: row.id,
    project_id: projectId,
    stream: row.stream,
    level: row.level as LogLevel,
    message: row.message,
    service: row.service,
    trace_id: row.trace_id,
    span_id: row.span_id,
    metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, unknown>) : null,
    timestamp: new Date(row.ts).toISOString(),
    created_at: new Date(row.created_at).toISOString(),
  };
}
