// Per-team caps that hold under parallel requests (docs/ARCHITECTURE.md "Counts under concurrency"): the
// count and the insert are ONE statement, `INSERT … SELECT … WHERE (SELECT COUNT(*) …) < cap`, so
// 25 parallel creates against a cap of 10 store exactly 10. Drizzle's insert builder cannot put a
// condition on an insert of values, so the statement is written with its `sql` template; columns
// and values still come from the Drizzle table, so names and JSON encoding stay the schema's.
import { getTableColumns, sql, type InferInsertModel, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "../db/client";

/**
 * Inserts `values` into `table` only while fewer than `cap` rows have `scope.column = scope.value`.
 * `scope.where` narrows what counts (pending invitations, not used ones). Returns false (nothing
 * written) when the cap is reached.
 */
export async function insertUnderCap<T extends SQLiteTable>(
  db: Db,
  table: T,
  values: InferInsertModel<T>,
  scope: { column: SQLiteColumn; value: string; where?: SQL },
  cap: number,
): Promise<boolean> {
  const columns = getTableColumns(table) as Record<string, SQLiteColumn>;
  const entries = Object.entries(values as Record<string, unknown>).filter(([, value]) => value !== undefined);
  const names = sql.join(
    entries.map(([key]) => sql.identifier(columns[key].name)),
    sql`, `,
  );
  const params = sql.join(
    entries.map(([key, value]) => sql`${columns[key].mapToDriverValue(value)}`),
    sql`, `,
  );
  const result = await db.run(
    sql`INSERT INTO ${table} (${names}) SELECT ${params} WHERE (SELECT COUNT(*) FROM ${table} WHERE ${scope.column} = ${scope.value}${scope.where ? sql` AND ${scope.where}` : sql``}) < ${cap}`,
  );
  return result.meta.changes === 1;
}
