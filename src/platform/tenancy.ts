// Tenant isolation: every query of a team-owned row filters by team id, and a row that is missing
// or belongs to another team answers the same 404, so existence is never confirmed.
import { and, eq, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import { ApiError } from "./errors";

/** `id = ? AND team_id = ?` for a team-owned table. */
export function ownedRow(table: { id: AnySQLiteColumn; teamId: AnySQLiteColumn }, teamId: string, id: string): SQL {
  return and(eq(table.id, id), eq(table.teamId, teamId)) as SQL;
}

/** `team_id = ?` for list queries of a team-owned table. */
export function ownedBy(table: { teamId: AnySQLiteColumn }, teamId: string): SQL {
  return eq(table.teamId, teamId);
}

/** Returns the row, or throws the product's 404 when it is missing (or another team's). */
export function orNotFound<T>(row: T | undefined | null, notFound: () => ApiError = () => ApiError.notFound()): T {
  if (row === undefined || row === null) throw notFound();
  return row;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id that is not a UUID cannot name a row: the product's 404, like any unknown id. */
export function uuidOr404(id: string, notFound: () => ApiError): string {
  if (!UUID.test(id)) throw notFound();
  return id.toLowerCase();
}
