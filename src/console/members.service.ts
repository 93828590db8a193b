// People of a team: memberships and their roles, pending invitations, and the record of console
// actions. The last owner can be neither removed nor demoted, and pending invitations stop at their
// cap: each checked in the statement that writes. Removing a member withdraws their invitations,
// and those they sent; a demotion withdraws those the new role may not send (the link's use checks
// the inviter's current role as well, sign-in.queries.ts).
import { and, desc, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import type { SQLiteSelect } from "drizzle-orm/sqlite-core";
import type { Env } from "../env";
import { getDb, type Db } from "../db/client";
import { consoleActions, consoleLinks, memberships, teams, users, type Role } from "../db/schema";
import { nowIso } from "../platform/clock";
import { ApiError } from "../platform/errors";
import type { Plan } from "../platform/plans";
import { insertUnderCap } from "../platform/caps";
import { linkUrl, mailLink, newLink, normalizeEmail } from "./sign-in.service";

export interface TeamChoice {
  id: string;
  name: string;
  plan: Plan;
  role: Role;
}

/** Pending invitations a team may hold at once. */
export const MAX_PENDING_INVITATIONS = 50;
/** Actions shown on the members page. */
export const ACTIONS_SHOWN = 100;

/** Every team of a user with the user's role, by name; the user by id, or by a subquery answering it (the session's user, read in the same round trip). */
export function teamsOf(db: Db, userId: string | SQLiteSelect) {
  return db
    .select({ id: teams.id, name: teams.name, plan: teams.plan, role: memberships.role })
    .from(memberships)
    .innerJoin(teams, eq(teams.id, memberships.teamId))
    .where(typeof userId === "string" ? eq(memberships.userId, userId) : inArray(memberships.userId, userId))
    .orderBy(teams.name, teams.id);
}

export async function listMembers(db: Db, teamId: string) {
  return db
    .select({ userId: users.id, email: users.email, role: memberships.role, createdAt: memberships.createdAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.teamId, teamId))
    .orderBy(users.email);
}

export async function listInvitations(db: Db, teamId: string) {
  return db
    .select({ id: consoleLinks.id, email: consoleLinks.email, role: consoleLinks.role, createdAt: consoleLinks.createdAt, expiresAt: consoleLinks.expiresAt })
    .from(consoleLinks)
    .where(and(eq(consoleLinks.teamId, teamId), eq(consoleLinks.kind, "invite"), isNull(consoleLinks.usedAt), gt(consoleLinks.expiresAt, nowIso())))
    .orderBy(desc(consoleLinks.createdAt));
}

/** Who acts: a signed-in user and their role, or the operator. */
export interface Actor {
  email: string;
  role: Role | "operator";
  userId?: string;
}

/** Records a console action of a team. */
export function actionRow(teamId: string, actor: Actor, action: string, target: string | null) {
  return { id: crypto.randomUUID(), teamId, actor: actor.role === "operator" ? "operator" : actor.email, action, target, createdAt: nowIso() };
}

export async function recordAction(db: Db, teamId: string, actor: Actor, action: string, target: string | null = null): Promise<void> {
  await db.insert(consoleActions).values(actionRow(teamId, actor, action, target));
}

export async function listActions(db: Db, teamId: string) {
  return db.select().from(consoleActions).where(eq(consoleActions.teamId, teamId)).orderBy(desc(consoleActions.createdAt)).limit(ACTIONS_SHOWN);
}

/** Only an owner hands out or takes away ownership. */
function checkOwnership(actor: Actor, ...roles: (Role | null)[]): void {
  if (actor.role !== "owner" && actor.role !== "operator" && roles.includes("owner")) {
    throw new ApiError("forbidden", "Only an owner can change ownership");
  }
}

/**
 * Invites an address with a role: a 7-day single-use link by mail; the membership exists only when
 * the link is used. Not counted in the address's sign-in link limits (a stranger's asks must never
 * block an invitation); at most MAX_PENDING_INVITATIONS pending per team, counted in the insert
 * (422 past it).
 */
export async function invite(env: Env, teamId: string, teamName: string, actor: Actor, input: { email: string; role: Role }): Promise<void> {
  checkOwnership(actor, input.role);
  const db = getDb(env.DB);
  const email = normalizeEmail(input.email);
  const [member] = await db
    .select({ id: users.id })
    .from(users)
    .innerJoin(memberships, and(eq(memberships.userId, users.id), eq(memberships.teamId, teamId)))
    .where(eq(users.email, email));
  if (member) throw ApiError.validation({ email: ["is already a member of this team"] });
  const { values, token } = await newLink({ kind: "invite", email, teamId, role: input.role, teamName, invitedBy: actor.userId ?? null });
  // The pending count and the insert are one statement: parallel invitations stop at the cap.
  const pending = sql`${consoleLinks.kind} = 'invite' AND ${consoleLinks.usedAt} IS NULL AND ${consoleLinks.expiresAt} > ${values.createdAt}`;
  if (!(await insertUnderCap(db, consoleLinks, values, { column: consoleLinks.teamId, value: teamId, where: pending }, MAX_PENDING_INVITATIONS))) {
    throw ApiError.validation({ email: [`at most ${MAX_PENDING_INVITATIONS} invitations may be pending`] });
  }
  await recordAction(db, teamId, actor, "member_invited", `${email} (${input.role})`);
  await mailLink(env, { kind: "invite", email, url: linkUrl(env, token), teamName, teamId });
}

/** Withdraws a pending invitation (its link stops working). */
export async function withdrawInvitation(db: Db, teamId: string, actor: Actor, id: string): Promise<void> {
  const [gone] = await db
    .delete(consoleLinks)
    .where(and(eq(consoleLinks.id, id), eq(consoleLinks.teamId, teamId), eq(consoleLinks.kind, "invite"), isNull(consoleLinks.usedAt)))
    .returning({ email: consoleLinks.email });
  if (!gone) throw ApiError.notFound("Invitation not found");
  await recordAction(db, teamId, actor, "invitation_withdrawn", gone.email);
}

/** The pending invitations to the team that `userId` sent. */
const invitationsBy = (teamId: string, userId: string) =>
  and(eq(consoleLinks.teamId, teamId), eq(consoleLinks.kind, "invite"), eq(consoleLinks.invitedBy, userId), isNull(consoleLinks.usedAt));

/** `role = 'owner'` members of the team other than `userId`: the guard of the last-owner rule. */
const otherOwners = (teamId: string, userId: string) =>
  sql`(SELECT count(*) FROM ${memberships} m2 WHERE m2.team_id = ${teamId} AND m2.role = 'owner' AND m2.user_id != ${userId}) > 0`;

async function memberOr404(db: Db, teamId: string, userId: string) {
  const [row] = await db
    .select({ role: memberships.role, email: users.email })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.teamId, teamId), eq(memberships.userId, userId)));
  if (!row) throw ApiError.notFound("Member not found");
  return row;
}

const lastOwner = () => new ApiError("conflict", "The last owner of a team can be neither removed nor demoted");

/** Changes a member's role; the last owner keeps theirs (409). */
export async function changeRole(db: Db, teamId: string, actor: Actor, userId: string, role: Role): Promise<void> {
  const member = await memberOr404(db, teamId, userId);
  checkOwnership(actor, member.role, role);
  if (member.role === role) return;
  const guard = member.role === "owner" ? otherOwners(teamId, userId) : sql`1`;
  const changed = await db
    .update(memberships)
    .set({ role })
    .where(and(eq(memberships.teamId, teamId), eq(memberships.userId, userId), guard))
    .returning({ userId: memberships.userId });
  if (changed.length === 0) throw lastOwner();
  // Invitations answer to their inviter: those the new role may no longer send are withdrawn.
  if (role !== "owner") {
    await db.delete(consoleLinks).where(and(invitationsBy(teamId, userId), role === "admin" ? eq(consoleLinks.role, "owner") : undefined));
  }
  await recordAction(db, teamId, actor, "member_role_changed", `${member.email}: ${member.role} → ${role}`);
}

/**
 * Removes a member: their access to the team ends at their next request, and their pending
 * invitations to it are withdrawn. The last owner stays (409).
 */
export async function removeMember(db: Db, teamId: string, actor: Actor, userId: string): Promise<void> {
  const member = await memberOr404(db, teamId, userId);
  checkOwnership(actor, member.role);
  const guard = member.role === "owner" ? otherOwners(teamId, userId) : sql`1`;
  // One transaction: the membership goes, and with it every pending invitation of the address to
  // this team (another link in their mailbox must not bring a removed member back).
  const [removed] = await db.batch([
    db
      .delete(memberships)
      .where(and(eq(memberships.teamId, teamId), eq(memberships.userId, userId), guard))
      .returning({ userId: memberships.userId }),
    db
      .delete(consoleLinks)
      .where(
        and(
          eq(consoleLinks.teamId, teamId),
          eq(consoleLinks.kind, "invite"),
          eq(consoleLinks.email, member.email),
          isNull(consoleLinks.usedAt),
          sql`NOT EXISTS (SELECT 1 FROM ${memberships} m3 WHERE m3.team_id = ${teamId} AND m3.user_id = ${userId})`,
        ),
      ),
    // The invitations they sent are withdrawn with them (an invitation answers to its inviter).
    db
      .delete(consoleLinks)
      .where(and(invitationsBy(teamId, userId), sql`NOT EXISTS (SELECT 1 FROM ${memberships} m4 WHERE m4.team_id = ${teamId} AND m4.user_id = ${userId})`)),
  ]);
  if (removed.length === 0) throw lastOwner();
  await recordAction(db, teamId, actor, "member_removed", member.email);
}

/**
 * Operator: makes an address a member with a role now (no link), creating the user when new; an
 * existing member gets the role. Returns the membership.
 */
export async function addMember(db: Db, teamId: string, input: { email: string; role: Role }) {
  const email = normalizeEmail(input.email);
  const at = nowIso();
  await db.insert(users).values({ id: crypto.randomUUID(), email, createdAt: at }).onConflictDoNothing();
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, email));
  const operator: Actor = { email: "operator", role: "operator" };
  const inserted = await db.insert(memberships).values({ teamId, userId: user.id, role: input.role, createdAt: at }).onConflictDoNothing().returning();
  // Already a member: a role change, under the last-owner rule.
  if (inserted.length === 0) await changeRole(db, teamId, operator, user.id, input.role);
  else await recordAction(db, teamId, operator, "member_added", `${email} (${input.role})`);
  const [row] = await db
    .select()
    .from(memberships)
    .where(and(eq(memberships.teamId, teamId), eq(memberships.userId, user.id)));
  return { team_id: teamId, user_id: user.id, email, role: row.role, created_at: row.createdAt };
}
