// The raw SQL of the console: its retention deletes. Raw because Drizzle cannot say it: a DELETE
// bounded by `WHERE id IN (SELECT id ... LIMIT ?)`, run in steps by platform/retention.queries.ts
// (the chunk size is each statement's last parameter).

/** Sessions past their absolute expiry (?1, now) or idle since ?2. */
export const DELETE_ENDED_SESSIONS = "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at <= ? OR last_used_at <= ? LIMIT ?)";
/** One-time links used, or expired by ?1 (now). */
export const DELETE_SPENT_LINKS = "DELETE FROM console_links WHERE id IN (SELECT id FROM console_links WHERE used_at IS NOT NULL OR expires_at <= ? LIMIT ?)";
/** Console actions recorded before ?1. */
export const DELETE_OLD_ACTIONS = "DELETE FROM console_actions WHERE id IN (SELECT id FROM console_actions WHERE created_at < ? LIMIT ?)";
/** Flashes (console/flash.ts) expired by ?1 (now) and never read. Keyed by (session, path): rowid bounds the step. */
export const DELETE_EXPIRED_FLASHES = "DELETE FROM console_flashes WHERE rowid IN (SELECT rowid FROM console_flashes WHERE expires_at <= ? LIMIT ?)";
