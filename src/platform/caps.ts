// Per-team caps that hold under parallel requests (DESIGN.md "Counts under concurrency"): the
// count and the insert are ONE statement, `INSERT … SELECT … WHERE (SELECT COUNT(*) …) < cap`, so
// 25 parallel creates against a cap of 10 store exactly 10. Written as raw SQL because Drizzle's
// insert builder cannot put a condition on an INSERT … VALUES; columns and values still come from
// the Drizzle table, so names and JSON encoding stay the schema's.
import { getTableColumns, getTableName, type InferInsertModel } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";

/**
 * Inserts `values` into `table` only while fewer than `cap` rows have `scope.column = scope.value`.
 * Returns false (nothing written) when the cap is reached.
 */
export async function insertUnderCap<T extends SQLiteTable>(
  d1: D1Database,
  table: T,
  values: InferInsertModel<T>,
  scope: { column: SQLiteColumn; value: string },
  cap: number,
): Promise<boolean> {
  const columns = getTableColumns(table) as Record<string, SQLiteColumn>;
  const entries = Object.entries(values as Record<string, unknown>).filter(([, value]) => value !== undefined);
  const names = entries.map(([key]) => `"${columns[key].name}"`);
  const params = entries.map(([key, value]) => columns[key].mapToDriverValue(value) as unknown);
  const name = getTableName(table);
  const result = await d1
    .prepare(
      `INSERT INTO "${name}" (${names.join(", ")}) SELECT ${names.map(() => "?").join(", ")}
       WHERE (SELECT COUNT(*) FROM "${name}" WHERE "${scope.column.name}" = ?) < ?`,
    )
    .bind(...params, scope.value, cap)
    .run();
  return result.meta.changes === 1;
}

