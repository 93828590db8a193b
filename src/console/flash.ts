// The single-use flash of the console's post/redirect/get: a value a POST made that the page it
// redirects to shows once (a new key, an ingest token, a signing secret, a share link, the outcome
// of a test). Stored in D1 keyed by the session and the page's path, sealed with ENCRYPTION_KEY,
// never in a URL; the read that shows it deletes it in the same statement (DELETE … RETURNING), so
// a reload, a back button or a second tab finds nothing. It lives FLASH_TTL_MS at most (the
// retention job deletes what nobody read). A page reads its flash only when the redirect's notice
// code says there is one, so an ordinary page view costs no query.
import { and, eq, gt } from "drizzle-orm";
import type { Context } from "hono";
import { getDb } from "../db/client";
import { consoleFlashes } from "../db/schema";
import { nowIso, nowMs } from "../platform/clock";
import { decryptSecret, encryptSecret } from "../platform/crypto";
import { teamPath } from "./render";
import type { ConsoleEnv } from "./session";

/** A flash not read within 10 minutes is gone. */
export const FLASH_TTL_MS = 10 * 60_000;

/**
 * Post/redirect/get with a value shown once: stores `value` for the session and the page at
 * `path` (of the current team), then answers 303 to it with `?notice=<notice>`. A second flash for
 * the same page replaces the first.
 */
export async function redirectWithFlash(c: Context<ConsoleEnv>, path: string, notice: string, value: unknown): Promise<Response> {
  const target = teamPath(c, path);
  const sealed = await encryptSecret(c.env.ENCRYPTION_KEY, JSON.stringify(value));
  const row = { sessionId: c.get("consoleUser").sessionId, path: target, sealed, expiresAt: new Date(nowMs() + FLASH_TTL_MS).toISOString() };
  await getDb(c.env.DB)
    .insert(consoleFlashes)
    .values(row)
    .onConflictDoUpdate({ target: [consoleFlashes.sessionId, consoleFlashes.path], set: { sealed: row.sealed, expiresAt: row.expiresAt } });
  return c.redirect(`${target}?notice=${encodeURIComponent(notice)}`, 303);
}

/**
 * The flash of this page for this session, deleted as it is read; null when the request's notice
 * is not one of `notices` (no query made), when it was already read, or when it expired.
 */
export async function takeFlash<T>(c: Context<ConsoleEnv>, ...notices: string[]): Promise<T | null> {
  const notice = c.req.query("notice");
  if (!notice || !notices.includes(notice)) return null;
  const [row] = await getDb(c.env.DB)
    .delete(consoleFlashes)
    .where(and(eq(consoleFlashes.sessionId, c.get("consoleUser").sessionId), eq(consoleFlashes.path, c.req.path), gt(consoleFlashes.expiresAt, nowIso())))
    .returning({ sealed: consoleFlashes.sealed });
  if (!row) return null;
  return JSON.parse(await decryptSecret(c.env.ENCRYPTION_KEY, row.sealed, c.env.ENCRYPTION_KEY_PREVIOUS)) as T;
}
