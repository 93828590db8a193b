// Who of a team platform mail may go to (docs/ARCHITECTURE.md "Platform mail goes only to people who asked for
// it"): the one place that answers it. A member is a user with a membership in the team (an
// invitation becomes one only when its link is used, so pending invitees are not members).
import { and, eq, inArray } from "drizzle-orm";
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

/**
 * The addresses among `emails` (lower-cased) that belong to accepted members of the team: where
 * sandbox mail may go (docs/ARCHITECTURE.md "Sandbox mail reaches only people who agreed"). One
 * read whatever the number of addresses (at most a batch's worth, 100 × 50).
 */
export async function acceptedMembersAmong(d1: D1Database, teamId: string, emails: string[]): Promise<Set<string>> {
  const addresses = [...new Set(emails.map((email) => email.trim().toLowerCase()).filter(Boolean))];
  if (addresses.length === 0) return new Set();
  const found = new Set<string>();
  // D1 binds at most 100 parameters per statement: the team id and 90 addresses per read.
  for (let i = 0; i < addresses.length; i += 90) {
    const rows = await getDb(d1)
      .select({ email: users.email })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.teamId, teamId), inArray(users.email, addresses.slice(i, i + 90))));
    for (const row of rows) found.add(row.email);
  }
  return found;
}
