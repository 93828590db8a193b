// The request log's reading side, shared by the console page and GET /api/v1/requests: a team's
// requests of the last REQUEST_LOG_DAYS days, newest first, optionally one status class, paged
// by an opaque cursor.
import type { Env } from "../../env";
import { nowMs } from "../clock";
import { decodeCursor, encodeCursor } from "../cursor";
import { REQUEST_LOG_DAYS, type RequestRecord } from "./request-log.types";
import { requestLogStore } from "./request-log";

export const STATUS_CLASSES = ["2xx", "3xx", "4xx", "5xx"] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

export const REQUESTS_PAGE_DEFAULT = 50;
export const REQUESTS_PAGE_MAX = 100;

export interface RequestsQuery {
  status?: StatusClass;
  cursor?: string;
  limit?: number;
}

/** A logged request as the API and the console show it. */
export interface LoggedRequest {
  id: string;
  created_at: string;
  method: string;
  path: string;
  status: number;
  latency_ms: number;
  key_id: string;
  key_prefix: string;
  request_id: string;
  /** The error body we answered (4xx, 5xx), at most 4 KB of it; null otherwise. */
  error: string | null;
}

const DAY_MS = 86_400_000;
const CURSOR_FORM = /^(\d{1,16})\.(\d{1,16})$/;

/** One page of a team's request log. A cursor that does not decode answers 422 `cursor: ['is invalid']`. */
export async function listRequests(
  env: Env,
  teamId: string,
  query: RequestsQuery,
): Promise<{ data: LoggedRequest[]; pagination: { limit: number; next_cursor: string | null } }> {
  let after: { at: number; seq: number } | undefined;
  if (query.cursor) {
    const match = decodeCursor(query.cursor, CURSOR_FORM);
    after = { at: Number(match[1]), seq: Number(match[2]) };
  }
  const limit = Math.min(Math.max(1, query.limit ?? REQUESTS_PAGE_DEFAULT), REQUESTS_PAGE_MAX);
  const page = await requestLogStore(env, teamId).list({
    since: nowMs() - REQUEST_LOG_DAYS * DAY_MS,
    statusClass: query.status ? (Number(query.status[0]) as 2 | 3 | 4 | 5) : undefined,
    after,
    limit,
  });
  const last = page.rows.at(-1);
  return {
    data: page.rows.map(view),
    pagination: { limit, next_cursor: page.more && last ? encodeCursor(`${last.at}.${last.seq}`) : null },
  };
}

function view(row: RequestRecord): LoggedRequest {
  return {
    id: String(row.seq),
    created_at: new Date(row.at).toISOString(),
    method: row.method,
    path: row.path,
    status: row.status,
    latency_ms: row.latency_ms,
    key_id: row.key_id,
    key_prefix: row.key_prefix,
    request_id: row.request_id,
    error: row.error_body,
  };
}
