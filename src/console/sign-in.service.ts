// One-time links and sessions of the console (docs/ARCHITECTURE.md "Signing in"): links for sign-in,
// sign-up and invitations, stored as a SHA-256 hash and mailed by platform mail; their use (one
// guarded batch, sign-in.queries.ts); sessions stored hashed with a 30-day idle and a 90-day
// absolute expiry; sign-out and sign-out everywhere. No account enumeration: asking for a link
// answers the same whoever asks, and the per-address limit counts every address.
import { log } from "../platform/log";
import { and, eq, gt, isNull } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteSelect } from "drizzle-orm/sqlite-core";
import type { Env } from "../env";
import { getDb, type Db } from "../db/client";
import { consoleLinks, memberships, sessions, users, type LinkKind, type Role } from "../db/schema";
import { nowIso, nowMs } from "../platform/clock";
import { randomToken, sha256Hex } from "../platform/crypto";
import { ApiError } from "../platform/errors";
import { queuePlatformMail, tenantText, type MailContent } from "../platform/platform-mail";
import { getLimiter } from "../platform/rate-limit/limiter";
import { OWN_COUNTER } from "../platform/rate-limit/buckets";
import { consumeStatements } from "./sign-in.queries";
import { settings } from "../platform/config";

/** A sign-in or sign-up link lives 15 minutes. */
export const LINK_TTL_MS = 15 * 60_000;
/** An invitation (its link) lives 7 days. */
export const INVITE_TTL_MS = 7 * 86_400_000;
/** A session ends 30 days after its last use... */
export const SESSION_IDLE_MS = 30 * 86_400_000;
/** ...and never later than 90 days after sign-in. */
export const SESSION_MAX_MS = 90 * 86_400_000;
/** Its last use is written at most once an hour: a page view is not a D1 write. */
export const SESSION_TOUCH_MS = 3_600_000;
/** Sign-in and sign-up links mailed per address and hour from one client network (IPv4 address or IPv6 /64), member or not. */
export const LINKS_PER_ADDRESS_PER_NETWORK = 5;
/** Sign-in and sign-up links mailed per address and hour in all, whatever the networks. */
export const LINKS_PER_ADDRESS_PER_HOUR = 20;

export const SESSION_COOKIE = "edp_session";

/** The identity of an address: trimmed and lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** `{app_url}/console/auth/<token>` */
export function linkUrl(env: Env, token: string): string {
  return `${settings(env).appUrl}/console/auth/${token}`;
}

export interface NewLink {
  kind: LinkKind;
  email: string;
  teamId?: string | null;
  role?: Role | null;
  teamName?: string | null;
  invitedBy?: string | null;
}

/** The row of a new link and its token (which exists only in the mail and this return). */
export async function newLink(input: NewLink): Promise<{ values: typeof consoleLinks.$inferInsert; token: string; expiresAt: string }> {
  const token = randomToken(32);
  const at = nowMs();
  const expiresAt = new Date(at + (input.kind === "invite" ? INVITE_TTL_MS : LINK_TTL_MS)).toISOString();
  const values = {
    id: crypto.randomUUID(),
    tokenHash: await sha256Hex(token),
    kind: input.kind,
    email: normalizeEmail(input.email),
    teamId: input.teamId ?? null,
    role: input.role ?? null,
    teamName: input.teamName ?? null,
    invitedBy: input.invitedBy ?? null,
    createdAt: new Date(at).toISOString(),
    expiresAt,
  };
  return { values, token, expiresAt };
}

/** Stores a link; returns its token and expiry. */
export async function createLink(db: Db, input: NewLink): Promise<{ token: string; expiresAt: string }> {
  const { values, token, expiresAt } = await newLink(input);
  await db.insert(consoleLinks).values(values);
  return { token, expiresAt };
}

/**
 * Counts a sign-in or sign-up link for `email` asked from `network` (clientNetwork of the caller),
 * in the address's hourly object (keyed on a hash of the address, so no address names a Durable
 * Object): first in the network's counter (LINKS_PER_ADDRESS_PER_NETWORK), and only when that one
 * allows it in the address's total (LINKS_PER_ADDRESS_PER_HOUR), so asks a network is refused never
 * use up the total: a stranger cannot turn the limit into a lockout. Invitations are not counted.
 */
export async function allowLinkFor(env: Env, email: string, network: string): Promise<boolean> {
  const key = `console_links:${await sha256Hex(normalizeEmail(email))}`;
  const limiter = getLimiter(env);
  const [net] = await limiter.hitAll(key, [{ name: `net:${network}`, limit: LINKS_PER_ADDRESS_PER_NETWORK, windowSeconds: 3600 }]);
  if (!net.allowed) return false;
  const [all] = await limiter.hitAll(key, [{ name: OWN_COUNTER, limit: LINKS_PER_ADDRESS_PER_HOUR, windowSeconds: 3600 }]);
  return all.allowed;
}

const SUBJECTS: Record<LinkKind, string> = {
  sign_in: "Your sign-in link",
  sign_up: "Confirm your new team",
  invite: "You are invited to a team",
};

/** The mail of a link: the team name is tenant text (`tenantText`, the one rule of platform mail). */
export function linkMail(kind: LinkKind, input: { url: string; teamName?: string | null }): MailContent {
  const team = input.teamName ? tenantText(input.teamName) : null;
  const lines: Record<LinkKind, string> = {
    sign_in: "Use this link to sign in to the Edge Platform console. It works once, for 15 minutes.",
    sign_up: `Use this link to create your team${team ? ` "${team}"` : ""} on the Edge Platform. It works once, for 15 minutes.`,
    invite: `You are invited to join${team ? ` the team "${team}"` : " a team"} on the Edge Platform. The link works once, for 7 days.`,
  };
  return { subject: SUBJECTS[kind], text: `${lines[kind]}\n\n${input.url}\n\nIf you did not ask for it, ignore this message.` };
}

/**
 * True when links are not mailed but only printed to the Worker's log: the `outbox` transport of
 * local development, where that log is the terminal running `npm start`. The pages that promise
 * a link say so instead of "check your email".
 */
export function linksInTerminal(env: Pick<Env, "MAIL_TRANSPORT">): boolean {
  return settings(env).mailTransport === "outbox";
}

/**
 * Mails a link by platform mail (free: the person asked for it). With the `outbox` transport
 * nothing leaves the machine, so the link is also printed to the Worker's log (wrangler dev's
 * terminal): how a local developer, and the end-to-end run, follow it. Never with a real transport.
 */
export async function mailLink(
  env: Env,
  input: { kind: LinkKind; email: string; url: string; teamName?: string | null; teamId?: string | null },
): Promise<void> {
  await queuePlatformMail(env, {
    teamId: input.kind === "invite" ? (input.teamId ?? null) : null,
    kind: `console_${input.kind}`,
    to: input.email,
    ...linkMail(input.kind, input),
  });
  if (linksInTerminal(env)) {
    log.info("console link (outbox transport: local only)", { kind: input.kind, to: input.email, url: input.url });
  }
}

/** Whether the address belongs to a user who is a member of at least one team. */
async function isMember(db: Db, email: string): Promise<boolean> {
  const rows = await db
    .select({ userId: users.id })
    .from(users)
    .innerJoin(memberships, eq(memberships.userId, users.id))
    .where(eq(users.email, normalizeEmail(email)))
    .limit(1);
  return rows.length > 0;
}

/**
 * `POST /console/sign-in`: a link when the address is a member's and its hourly limits allow. Same
 * outcome to the caller either way; the route runs it after its answer (waitUntil), so the answer
 * takes the same time for a member and a stranger.
 */
export async function requestSignIn(env: Env, email: string, network: string): Promise<void> {
  if (!(await allowLinkFor(env, email, network))) return;
  const db = getDb(env.DB);
  if (!(await isMember(db, email))) return;
  const { token } = await createLink(db, { kind: "sign_in", email });
  await mailLink(env, { kind: "sign_in", email: normalizeEmail(email), url: linkUrl(env, token) });
}

/** `POST /console/sign-up`: a link whose use creates the user, the team and the owner membership. */
export async function requestSignUp(env: Env, email: string, teamName: string, network: string): Promise<void> {
  if (!(await allowLinkFor(env, email, network))) return;
  const { token } = await createLink(getDb(env.DB), { kind: "sign_up", email, teamName });
  await mailLink(env, { kind: "sign_up", email: normalizeEmail(email), url: linkUrl(env, token), teamName });
}

/**
 * Operator: a sign-in link for an existing user, answered rather than mailed (support, local
 * development; `npm start` prints one). Logged without the token. 404 when the address is no user.
 */
export async function operatorSignInLink(env: Env, email: string): Promise<{ url: string; expires_at: string }> {
  const db = getDb(env.DB);
  const address = normalizeEmail(email);
  const user = await db.query.users.findFirst({ where: eq(users.email, address) });
  if (!user) throw new ApiError("not_found", "No user with this address");
  const { token, expiresAt } = await createLink(db, { kind: "sign_in", email: address });
  log.info("operator minted a console sign-in link", { user_id: user.id, expires_at: expiresAt });
  return { url: linkUrl(env, token), expires_at: expiresAt };
}

/** A link that can still be used (for the confirm page), or null. */
export async function findUsableLink(db: Db, token: string) {
  if (!isTokenShaped(token)) return null;
  const row = await db.query.consoleLinks.findFirst({
    where: and(eq(consoleLinks.tokenHash, await sha256Hex(token)), isNull(consoleLinks.usedAt), gt(consoleLinks.expiresAt, nowIso())),
  });
  return row ?? null;
}

const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;
const isTokenShaped = (token: string) => TOKEN_FORMAT.test(token);

/**
 * Uses a link: creates what it stands for and a session, in one transaction that does nothing
 * unless this request is the one that marked the link used. Returns the session's token and the
 * team to land in (the new or joined team), or null when the link is unknown, used or expired.
 */
export async function consumeLink(env: Env, token: string): Promise<{ sessionToken: string; teamId: string | null } | null> {
  const db = getDb(env.DB);
  const link = await findUsableLink(db, token);
  if (!link) return null;
  const sessionToken = randomToken(32);
  const at = nowMs();
  const teamId = link.kind === "sign_up" ? crypto.randomUUID() : link.teamId;
  const statements = consumeStatements(env.DB, {
    linkId: link.id,
    kind: link.kind,
    email: link.email,
    teamId,
    teamName: link.teamName,
    role: link.role,
    userId: crypto.randomUUID(),
    sessionId: crypto.randomUUID(),
    sessionHash: await sha256Hex(sessionToken),
    now: new Date(at).toISOString(),
    sessionExpiresAt: new Date(at + SESSION_MAX_MS).toISOString(),
  });
  const [consumed] = await env.DB.batch(statements);
  if (consumed.meta.changes !== 1) return null;
  return { sessionToken, teamId };
}

export interface SessionUser {
  sessionId: string;
  userId: string;
  email: string;
}

/** The sessions of a token hash still live at `at` (neither past their end nor idle too long). */
function liveSession(tokenHash: string, at: number) {
  return and(
    eq(sessions.tokenHash, tokenHash),
    gt(sessions.expiresAt, new Date(at).toISOString()),
    gt(sessions.lastUsedAt, new Date(at - SESSION_IDLE_MS).toISOString()),
  );
}

/** The user of a session cookie, or null when unknown or expired (idle or absolute). Moves its last use forward at most hourly. */
export async function loadSession(db: Db, token: string | undefined): Promise<SessionUser | null> {
  return (await loadSessionWith(db, token, () => null))?.user ?? null;
}

/**
 * loadSession, with one more read about the session's user made in the same D1 round trip: `read`
 * gets the live session's user id as a subquery (the console's middleware reads the user's teams
 * with it, so a page does not wait for the session before asking for the teams), and `also`, reads
 * of the page itself that ride the same batch (their rows in `also`, in order).
 */
export async function loadSessionWith<T>(
  db: Db,
  token: string | undefined,
  read: (userId: SQLiteSelect) => (BatchItem<"sqlite"> & PromiseLike<T>) | null,
  also: readonly BatchItem<"sqlite">[] = [],
): Promise<{ user: SessionUser; read: T; also: unknown[] } | null> {
  if (!token || !isTokenShaped(token)) return null;
  const at = nowMs();
  const tokenHash = await sha256Hex(token);
  const session = db
    // No two columns named alike (sessions.id and users.id): a D1 batch returns rows keyed by column name.
    .select({ sessionId: sessions.id, userId: sessions.userId, email: users.email, lastUsedAt: sessions.lastUsedAt })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(liveSession(tokenHash, at))
    .limit(1);
  const more = read(db.select({ userId: sessions.userId }).from(sessions).where(liveSession(tokenHash, at)).limit(1) as unknown as SQLiteSelect);
  const items = [session, ...(more ? [more] : []), ...also];
  const results: unknown[] = items.length > 1 ? await db.batch(items as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]) : [await session];
  const [row] = results[0] as Awaited<typeof session>;
  if (!row) return null;
  if (Date.parse(row.lastUsedAt) < at - SESSION_TOUCH_MS) {
    await db
      .update(sessions)
      .set({ lastUsedAt: new Date(at).toISOString() })
      .where(eq(sessions.id, row.sessionId));
  }
  return {
    user: { sessionId: row.sessionId, userId: row.userId, email: row.email },
    read: (more ? results[1] : null) as T,
    also: results.slice(more ? 2 : 1),
  };
}

/** Sign-out: the session is deleted on the server. */
export async function endSession(db: Db, sessionId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.id, sessionId));
}

/** Sign-out everywhere: every session of the user is deleted. */
export async function endAllSessions(db: Db, userId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.userId, userId));
}
