// Who of a team platform mail may go to (docs/ARCHITECTURE.md "Platform mail goes only to people who asked for
// it"): the one place that answers it. A member is a user with a membership in the team (an
// invitation becomes one only when its link is used, so pending invitees are not members).
import { and, eq } from "drizzle-orm";
import { getDb } from "../db/client";
import { memberships, users } from "../db/schema";

/**
 * True when `email` belongs to a member of the team who has accepted, and may therefore receive
 * the team's alert emails. Addresses compare case-insensitively, surrounding spaces ignored (users'
 * addresses are stored lower-cased).
 */
export async function isTeamMailRecipient(d1: D1Database, teamId: string, email: string): Promise<boolean> {
  const address = email.trim().toLowerCase();
  if (!address) return false;
  const [row] = await getDb(d1)
    .select({ userId: memberships.userId })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.teamId, teamId), eq(users.email, address)))
    .limit(1);
  return row !== undefined;
}
