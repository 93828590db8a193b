// Teams (and the owner membership of their owner_email) and API keys, as the operator API manages them. Keys are stored as a SHA-256 hash with a
// short visible prefix; the plaintext exists only in the create response.
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { apiKeys, memberships, teams, users, type MailKeyPolicy } from "../../db/schema";
import { forgetKey, forgetTeam, forgetUnknownKeys } from "../auth";
import { nowIso } from "../clock";
import { randomToken, sha256Hex } from "../crypto";
import { insertUnderCap } from "../caps";
import { ApiError } from "../errors";
import { orNotFound } from "../tenancy";
import type { Plan } from "../plans";

export const KEY_PREFIX = "edp_";
const VISIBLE_PREFIX_LENGTH = 12;

export type TeamRow = typeof teams.$inferSelect;
export type KeyRow = typeof apiKeys.$inferSelect;

export const DEFAULT_MAIL_POLICY: MailKeyPolicy = {
  sandbox: false,
  allowed_streams: ["transactional", "broadcast"],
  allowed_recipients: [],
  hourly_cap: null,
  daily_cap: null,
  suspended: false,
};

export function teamView(team: TeamRow) {
  return { id: team.id, name: team.name, plan: team.plan, owner_email: team.ownerEmail, created_at: team.createdAt };
}

export function keyView(key: KeyRow) {
  return {
    id: key.id,
    team_id: key.teamId,
    name: key.name,
    scopes: key.scopes,
    prefix: key.prefix,
    created_at: key.createdAt,
    mail: key.mail,
  };
}

const teamNotFound = () => new ApiError("not_found", "Team not found");
const keyNotFound = () => new ApiError("not_found", "Key not found");

/** Creates a team; its `owner_email` becomes a user and the team's owner (docs/ARCHITECTURE.md "People"). */
export async function createTeam(db: Db, input: { name: string; plan: Plan; owner_email?: string | null }): Promise<TeamRow> {
  const at = nowIso();
  const id = crypto.randomUUID();
  const [[team]] = await db.batch([
    db
      .insert(teams)
      .values({ id, name: input.name, plan: input.plan, ownerEmail: input.owner_email ?? null, createdAt: at, updatedAt: at })
      .returning(),
    ...(input.owner_email ? ownerStatements(db, id, input.owner_email, at) : []),
  ]);
  return team;
}

/** The writes that make `email` a user and an owner of the team. */
export function ownerStatements(db: Db, teamId: string, email: string, at: string) {
  const address = email.trim().toLowerCase();
  return [
    db.insert(users).values({ id: crypto.randomUUID(), email: address, createdAt: at }).onConflictDoNothing(),
    db
      .insert(memberships)
      .values({ teamId, userId: sql`(SELECT id FROM users WHERE email = ${address})`, role: "owner", createdAt: at })
      .onConflictDoUpdate({ target: [memberships.teamId, memberships.userId], set: { role: "owner" } }),
  ] as const;
}

export async function getTeam(db: Db, id: string): Promise<TeamRow> {
  return orNotFound(await db.query.teams.findFirst({ where: eq(teams.id, id) }), teamNotFound);
}

export async function updateTeam(db: Db, id: string, input: { name?: string; plan?: Plan; owner_email?: string | null }): Promise<TeamRow> {
  const changes: Partial<TeamRow> = { updatedAt: nowIso() };
  if (input.name !== undefined) changes.name = input.name;
  if (input.plan !== undefined) changes.plan = input.plan;
  if (input.owner_email !== undefined) changes.ownerEmail = input.owner_email;
  const [team] = await db.update(teams).set(changes).where(eq(teams.id, id)).returning();
  // The plan drives rate limits and quotas: this isolate's cached keys of the team go now.
  forgetTeam(id);
  const found = orNotFound(team, teamNotFound);
  // A new owner address is an owner too (the previous owners stay: removing one is the console's).
  if (input.owner_email) await db.batch(ownerStatements(db, id, input.owner_email, changes.updatedAt!));
  return found;
}

/** A new key of a team: the row to store (hash and visible prefix only) and the plaintext (shown once). */
export async function newKey(
  teamId: string,
  input: { name?: string; scopes: string[]; mail?: Partial<MailKeyPolicy> },
): Promise<{ values: typeof apiKeys.$inferInsert & { id: string }; key: string }> {
  const key = randomToken(32, KEY_PREFIX);
  const values = {
    id: crypto.randomUUID(),
    teamId,
    name: input.name ?? null,
    prefix: key.slice(0, VISIBLE_PREFIX_LENGTH),
    keyHash: await sha256Hex(key),
    scopes: [...new Set(input.scopes)],
    mail: { ...DEFAULT_MAIL_POLICY, ...input.mail },
    createdAt: nowIso(),
  };
  return { values, key };
}

/**
 * Creates a key for a team; returns the row and the plaintext key (shown once). With `maxKeys`
 * (self-service), the team's count of keys that are not revoked is checked in the insert itself
 * (422 past it), so parallel requests cannot pass the cap.
 */
/**
 * Only sandbox keys have caps (docs/ARCHITECTURE.md "Sandbox mail"): a live key sends under its
 * team's plan, and a cap it would ignore answers 422 rather than being stored and not honoured.
 */
export function requireCapsOnlyOnSandbox(mail: Partial<MailKeyPolicy>): void {
  if (mail.sandbox) return;
  const errors: Record<string, string[]> = {};
  for (const field of ["hourly_cap", "daily_cap"] as const) {
    if (mail[field] !== null && mail[field] !== undefined) errors[field] = ["only sandbox keys have caps; a live key sends under the team's plan"];
  }
  if (Object.keys(errors).length > 0) throw ApiError.validation(errors);
}

export async function createKey(
  db: Db,
  teamId: string,
  input: { name?: string; scopes: string[]; mail?: Partial<MailKeyPolicy> },
  options: { maxKeys?: number } = {},
): Promise<{ row: KeyRow; key: string }> {
  requireCapsOnlyOnSandbox({ ...DEFAULT_MAIL_POLICY, ...input.mail });
  await getTeam(db, teamId);
  const { values, key } = await newKey(teamId, input);
  if (options.maxKeys === undefined) {
    const [row] = await db.insert(apiKeys).values(values).returning();
    forgetUnknownKeys();
    return { row, key };
  }
  const inserted = await insertKeyUnderCap(db, values, options.maxKeys);
  if (!inserted) throw ApiError.validation({ scopes: [`a team may hold at most ${options.maxKeys} keys; revoke one first`] });
  forgetUnknownKeys();
  return { row: inserted, key };
}

/** Inserts the key while the team holds fewer than `max` live keys, counted and written in one statement (caps.ts). */
async function insertKeyUnderCap(db: Db, values: typeof apiKeys.$inferInsert & { id: string }, max: number): Promise<KeyRow | null> {
  if (!(await insertUnderCap(db, apiKeys, values, { column: apiKeys.teamId, value: values.teamId, where: isNull(apiKeys.revokedAt) }, max))) return null;
  return (await db.query.apiKeys.findFirst({ where: eq(apiKeys.id, values.id) })) ?? null;
}

export async function updateKey(db: Db, id: string, input: { name?: string; mail?: Partial<MailKeyPolicy> }): Promise<KeyRow> {
  const current = orNotFound(await db.query.apiKeys.findFirst({ where: and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)) }), keyNotFound);
  const changes: Partial<KeyRow> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.mail !== undefined) changes.mail = { ...current.mail, ...input.mail };
  if (changes.mail) requireCapsOnlyOnSandbox(changes.mail);
  if (Object.keys(changes).length === 0) return current;
  const [row] = await db.update(apiKeys).set(changes).where(eq(apiKeys.id, id)).returning();
  forgetKey(id);
  // A sandbox suspension is the team's: the operator suspending a sandbox key suspends the team's
  // sandbox sending, and lifting it on any key of the team lifts the team's (only the operator can).
  const suspended = input.mail?.suspended;
  if (suspended !== undefined && (suspended === false || row.mail.sandbox)) {
    await db
      .update(teams)
      .set({ sandboxSuspendedAt: suspended ? nowIso() : null })
      .where(eq(teams.id, row.teamId));
    forgetTeam(row.teamId);
  }
  return row;
}

/** Revokes a key (of `teamId` when given: another team's key is not found); it answers 401 from then on. */
export async function revokeKey(db: Db, id: string, teamId?: string): Promise<KeyRow> {
  const revoked = await db
    .update(apiKeys)
    .set({ revokedAt: nowIso() })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt), teamId === undefined ? undefined : eq(apiKeys.teamId, teamId)))
    .returning();
  forgetKey(id);
  return orNotFound(revoked[0], keyNotFound);
}
