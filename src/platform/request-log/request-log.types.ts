// The request log's bounds and the shapes that cross between the Worker and its store
// (RequestLogStore), apart from the store itself: the app's reading and writing sides import these
// without bundling the Durable Object class and its SQL migrations.

/** How long a request is kept. */
export const REQUEST_LOG_DAYS = 7;
/** Rows kept per team: the newest. */
export const REQUEST_LOG_MAX_ROWS = 10_000;

/**
 * One request as the Worker sends it, a JSON array:
 * [at ms, method, path, status, latency ms, key id, key prefix, request id, error body or null].
 */
export type RequestLogRow = [number, string, string, number, number, string, string, string, string | null];

/** A stored request. */
export interface RequestRecord {
  seq: number;
  at: number;
  method: string;
  path: string;
  status: number;
  latency_ms: number;
  key_id: string;
  key_prefix: string;
  request_id: string;
  error_body: string | null;
}

/** What a read asks for: newest first, from `since` on (ms), optionally one status class, after a cursor. */
export interface RequestQuery {
  since: number;
  /** 2 for 2xx ... 5 for 5xx. */
  statusClass?: 2 | 3 | 4 | 5;
  /** Continue after this (at, seq). */
  after?: { at: number; seq: number };
  limit: number;
}
