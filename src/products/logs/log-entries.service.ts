// Log entries of a project: the keyset-paginated query and the live tail, both served by the
// project's store (logs.store.ts) after the team's ownership of the project is checked in D1.
import { getDb } from "../../db/client";
import type { Env } from "../../env";
import { ApiError } from "../../platform/errors";
import type { EntriesQuery, TailQuery } from "./logs.schemas";
import { MAX_TAILS } from "./store/log-tails";
import { entryView, logStore } from "./logs.store";
import type { EntryRecord } from "./store/log-store";
import type { EntryFilter } from "./store/log-store.queries";
import { decodeCursor, encodeCursor } from "../../platform/cursor";
import { loadProject, type ProjectRow } from "./logs.service";

/** Opaque cursor: the (ts, seq) of the last entry of a page. */
function entryCursor(row: EntryRecord): string {
  return encodeCursor(`${row.ts}.${row.seq}`);
}

function entryPosition(cursor: string): { ts: number; seq: number } {
  const match = decodeCursor(cursor, /^(\d{1,16})\.(\d{1,16})$/);
  return { ts: Number(match[1]), seq: Number(match[2]) };
}

/**
 * Newest first, keyset-paginated on (time, seq), read from the project's store: the time index
 * serves the order, (level, time) the level filter, the trigram index `q`; the other filters are
 * checked on the rows walked. The project is looked up in D1 first, so another team's project (or
 * an unknown id) never reaches, or creates, a store.
 */
export async function queryEntries(env: Env, teamId: string, projectId: string, query: EntriesQuery) {
  return projectEntries(env, await loadProject(getDb(env.DB), teamId, projectId), query);
}

/** `queryEntries` for a project already loaded under the team (the console page loads it once for all its reads). */
export async function projectEntries(env: Env, project: ProjectRow, query: EntriesQuery) {
  return entriesPage(project.id, query, await logStore(env, project.id).query(storeFilter(query), entriesPageSize(query)));
}

/** The store's filter of an entries query (its cursor decoded). */
export function storeFilter(query: EntriesQuery): EntryFilter {
  return {
    level: query.level,
    stream: query.stream,
    service: query.service,
    trace_id: query.trace_id,
    since: query.since ? Date.parse(query.since) : undefined,
    until: query.until ? Date.parse(query.until) : undefined,
    q: query.q,
    after: query.cursor ? entryPosition(query.cursor) : undefined,
  };
}

/** How much of the store one page of an entries query takes. */
export function entriesPageSize(query: EntriesQuery): { limit: number; maxBytes: number } {
  return { limit: query.limit, maxBytes: ENTRIES_PAGE_BYTES };
}

/** The API's answer for a page the store found. */
export function entriesPage(projectId: string, query: EntriesQuery, { rows, more }: { rows: EntryRecord[]; more: boolean }) {
  return {
    data: rows.map((row) => entryView(projectId, row)),
    pagination: { limit: query.limit, next_cursor: more ? entryCursor(rows[rows.length - 1]!) : null },
  };
}

/**
 * Opens a live tail of a project (after the D1 ownership check, so another team's or an unknown
 * project never reaches a store): the store's event stream, or 429 when the project has the
 * maximum of tails open.
 */
export async function openTail(env: Env, teamId: string, keyId: string | null, projectId: string, query: TailQuery): Promise<ReadableStream<Uint8Array>> {
  await loadProject(getDb(env.DB), teamId, projectId);
  // The tail follows the key that opened it: it ends soon after the key is revoked (log-tails.ts);
  // the console's (keyId null) follows its session instead (platform/follow-credential.ts).
  const stream = await logStore(env, projectId).openTail(projectId, keyId, {
    level: query.level,
    stream: query.stream,
    service: query.service,
    trace_id: query.trace_id,
    q: query.q,
  });
  if (!stream) throw new ApiError("tail_limit", `Too many live tails open for this project (max ${MAX_TAILS})`);
  return stream;
}

/** Byte budget of one page of entries (messages and metadata): a page stops short of `limit` past it. */
export const ENTRIES_PAGE_BYTES = 2 * 1024 * 1024;
