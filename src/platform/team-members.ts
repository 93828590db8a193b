// Who of a team platform mail may go to (DESIGN.md "Platform mail goes only to people who asked for
// it"): the one place that answers it, so the console's memberships replace the owner here alone.
import { and, eq, sql } from "drizzle-orm";
import { getDb } from "../db/client";
import { teams } from "../db/schema";

/**
 * True when `email` belongs to a member of the team who has accepted, and may therefore receive
 * the team's alert emails. Until the console's memberships exist, the team's one member is its
 * owner (`teams.owner_email`). Addresses compare case-insensitively, surrounding spaces ignored.
 */
export async function isTeamMailRecipient(d1: D1Database, teamId: string, email: string): Promise<boolean> {
  const address = email.trim().toLowerCase();
  if (!address) return false;
  const [row] = await getDb(d1)
    .select({ id: teams.id })
    .from(teams)
    .where(and(eq(teams.id, teamId), sql`lower(trim(${teams.ownerEmail})) = ${address}`))
    .limit(1);
  return row !== undefined;
}
