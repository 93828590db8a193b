// Tables of one team's request log (a SQLite-backed Durable Object, `RequestLogStore`, one per
// team): the requests made with the team's API keys. An integer rowid (`seq`) keeps appends cheap
// and breaks ties in the newest-first order; times are integer milliseconds.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const requests = sqliteTable(
  "requests",
  {
    seq: integer("seq").primaryKey(),
    /** When the request arrived, in ms since the epoch (the platform clock of the Worker). */
    at: integer("at").notNull(),
    method: text("method").notNull(),
    /** The path without its query string. */
    path: text("path").notNull(),
    status: integer("status").notNull(),
    latencyMs: integer("latency_ms").notNull(),
    keyId: text("key_id").notNull(),
    keyPrefix: text("key_prefix").notNull(),
    requestId: text("request_id").notNull(),
    /** The error body we answered (status >= 400), cut to ERROR_BODY_MAX bytes; null otherwise. */
    errorBody: text("error_body"),
  },
  // Newest-first listing, its cursor and retention (rowid = seq breaks ties inside the index).
  (t) => [index("requests_at_idx").on(t.at)],
);
