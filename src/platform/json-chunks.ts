// Rows handed to a Durable Object's SQLite as JSON lists: one bound string per statement, which
// `json_each` turns back into rows. SQLite in a Durable Object refuses a bound string much larger
// than 1 MB, so a batch of rows goes as several lists of at most JSON_CHUNK_BYTES each.
import { utf8Length } from "./sizes";

/** JSON bytes of rows per list (one insert statement). */
export const JSON_CHUNK_BYTES = 900_000;

/** Rows as JSON arrays of at most JSON_CHUNK_BYTES each (a single row past it goes alone). */
export function jsonChunks(rows: Iterable<unknown>, maxBytes = JSON_CHUNK_BYTES): string[] {
  const chunks: string[] = [];
  let parts: string[] = [];
  let size = 2;
  for (const row of rows) {
    const text = JSON.stringify(row);
    const bytes = utf8Length(text) + 1;
    if (parts.length > 0 && size + bytes > maxBytes) {
      chunks.push(`[${parts.join(",")}]`);
      parts = [];
      size = 2;
    }
    parts.push(text);
    size += bytes;
  }
  if (parts.length > 0) chunks.push(`[${parts.join(",")}]`);
  return chunks;
}
