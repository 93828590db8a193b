// The raw SQL of mail, kept apart from the services. Raw where Drizzle cannot say it, or must not:
// json_each over an email's stored recipients (the recipient filter), and the sandbox cap
// counters, whose reservation batch a counter past its cap rolls back with a CHECK failure that
// checkCaps recognises by D1's own error message (Drizzle would wrap it in a "Failed query" error);
// retention's and the body migration's steps, which pass a chunk of ids as one JSON parameter
// (a chunk is over D1's 100 bound parameters).
// (Not named `*.sql.ts`: wrangler's bundler takes an import ending in `.sql` for a text module.)
import { sql, type SQL } from "drizzle-orm";
import { emails } from "../../db/schema";

/** The email has this (lower-cased, parsed) address among its to, cc and bcc. */
export const hasRecipient = (address: string): SQL => sql`exists (select 1 from json_each(${emails.recipients}) where value = ${address})`;

/** One sandbox cap counter: a key's (or its team's) UTC hour or day starting at `start`. */
export interface CapWindow {
  /** `key`: the key's own cap in sandbox_cap_usage; `team`: the team's in sandbox_team_cap_usage. */
  owner: "key" | "team";
  window: "hour" | "day";
  start: string;
  cap: number;
}

/** The counter table and owner column of a window. */
const counter = (x: CapWindow) => (x.owner === "key" ? { table: "sandbox_cap_usage", id: "key_id" } : { table: "sandbox_team_cap_usage", id: "team_id" });

/** Adds `amount` to the counter of `ownerId` (creating it); fails the batch on the CHECK when past the cap. */
export function reserveCap(d1: D1Database, ownerId: string, x: CapWindow, amount: number): D1PreparedStatement {
  const { table, id } = counter(x);
  return d1
    .prepare(
      `INSERT INTO ${table} (${id}, window, start, used, cap) VALUES (?1, ?2, ?3, ?4, ?5)
       ON CONFLICT (${id}, window, start) DO UPDATE SET used = used + excluded.used, cap = excluded.cap`,
    )
    .bind(ownerId, x.window, x.start, amount, x.cap);
}

/** What the counter holds (0 when there is none). */
export async function capUsed(d1: D1Database, ownerId: string, x: CapWindow): Promise<number> {
  const { table, id } = counter(x);
  const row = await d1
    .prepare(`SELECT used FROM ${table} WHERE ${id} = ?1 AND window = ?2 AND start = ?3`)
    .bind(ownerId, x.window, x.start)
    .first<{ used: number }>();
  return row?.used ?? 0;
}

/** Gives `amount` back to the counter (never below 0). */
export function releaseCap(d1: D1Database, ownerId: string, x: CapWindow, amount: number): D1PreparedStatement {
  const { table, id } = counter(x);
  return d1.prepare(`UPDATE ${table} SET used = MAX(0, used - ?4) WHERE ${id} = ?1 AND window = ?2 AND start = ?3`).bind(ownerId, x.window, x.start, amount);
}

/** A chunk of finished emails past the cutoff: what retention deletes next (their R2 bodies first). */
export async function expiredEmails(d1: D1Database, cutoff: string, limit: number): Promise<Array<{ id: string; team_id: string }>> {
  const { results } = await d1
    .prepare("SELECT id, team_id FROM emails WHERE created_at < ?1 AND status <> 'queued' LIMIT ?2")
    .bind(cutoff, limit)
    .all<{ id: string; team_id: string }>();
  return results;
}

/** Deletes emails by id (a JSON array of ids: one bound parameter whatever the chunk). */
export async function deleteEmailsById(d1: D1Database, ids: string[]): Promise<number> {
  const result = await d1.prepare("DELETE FROM emails WHERE id IN (SELECT value FROM json_each(?1))").bind(JSON.stringify(ids)).run();
  return result.meta.changes;
}

/** The oldest rows that still hold their body (stored before the bodies moved to R2), through the partial index. */
export async function rowsWithBodyInD1(
  d1: D1Database,
  limit: number,
): Promise<Array<{ id: string; team_id: string; html: string | null; text: string | null }>> {
  const { results } = await d1
    .prepare("SELECT id, team_id, html, text FROM emails WHERE body_in_r2 = 0 ORDER BY created_at LIMIT ?1")
    .bind(limit)
    .all<{ id: string; team_id: string; html: string | null; text: string | null }>();
  return results;
}

/** Marks rows whose body is now in R2 and empties their columns; a row already marked is left alone. */
export async function markBodiesMoved(d1: D1Database, ids: string[]): Promise<number> {
  const result = await d1
    .prepare("UPDATE emails SET body_in_r2 = 1, html = NULL, text = NULL WHERE body_in_r2 = 0 AND id IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(ids))
    .run();
  return result.meta.changes;
}

// Retention's steps (mail.cron.ts, deleteInSteps): ?1 the cutoff, ?2 the step's rows.

/** Status history rows (of emails and platform mail alike) made before ?1. */
export const DELETE_OLD_EMAIL_EVENTS = "DELETE FROM email_events WHERE id IN (SELECT id FROM email_events WHERE created_at < ?1 LIMIT ?2)";

/** Finished platform mail made before ?1. */
export const DELETE_OLD_PLATFORM_MAIL =
  "DELETE FROM platform_outbox WHERE id IN (SELECT id FROM platform_outbox WHERE created_at < ?1 AND status NOT IN ('pending', 'sending') LIMIT ?2)";

/** The sandbox cap counters' tables: their windows that are over go. */
export const SANDBOX_CAP_TABLES = ["sandbox_cap_usage", "sandbox_team_cap_usage"] as const;

/** Windows of a sandbox cap counter's table that started before ?1. */
export function deleteOldCapWindowsSql(table: (typeof SANDBOX_CAP_TABLES)[number]): string {
  return `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE start < ?1 LIMIT ?2)`;
}
