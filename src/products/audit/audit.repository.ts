// Drizzle pieces every audit service shares: the team-and-project conditions, the paged list of a
// project's findings or reports (one query shape for both), and a Drizzle query as a D1 statement
// so it can share a batch with the raw statements of audit.queries.ts.
import { and, count, desc, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { auditFindings, auditReports } from "../../db/schema/audit";
import type { PageQuery } from "../../platform/pagination";
import type { Scope } from "./audit-summary.service";

/** The tables whose rows belong to one project of one team. */
type ProjectTable = typeof auditFindings | typeof auditReports;

/** The row `id` of the project, never another team's or another project's. */
export function projectRow(table: ProjectTable, scope: Scope, id: string) {
  return and(eq(table.id, id), eq(table.teamId, scope.teamId), eq(table.projectId, scope.projectId));
}

/**
 * A page of a project's findings or reports, newest first (`created_at`, then id, both
 * descending), optionally of one status, with the total for that filter: one batch.
 */
export async function projectPage<T extends ProjectTable>(
  env: Env,
  table: T,
  scope: Scope,
  query: PageQuery & { status?: T["$inferSelect"]["status"] },
): Promise<{ rows: T["$inferSelect"][]; total: number }> {
  const db = getDb(env.DB);
  const where = and(
    eq(table.teamId, scope.teamId),
    eq(table.projectId, scope.projectId),
    query.status ? eq(table.status, query.status) : undefined,
  );
  const [rows, [{ total }]] = await db.batch([
    db
      .select()
      .from(table)
      .where(where)
      .orderBy(desc(table.createdAt), desc(table.id))
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page),
    db.select({ total: count() }).from(table).where(where),
  ]);
  return { rows: rows as T["$inferSelect"][], total };
}

/** A Drizzle query as a D1 statement, to batch it with the raw counter statements. */
export function prepared(d1: D1Database, query: { toSQL(): { sql: string; params: unknown[] } }): D1PreparedStatement {
  const { sql: text, params } = query.toSQL();
  return d1.prepare(text).bind(...params);
}
