// CSV cells and rows as RFC 4180 writes them (fields with a comma, a quote or a line break are
// quoted, quotes doubled, rows end in CRLF), with spreadsheet formula neutralising: a text cell
// that starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading single quote, so a
// spreadsheet shows it as text instead of running it (OWASP "CSV injection"). Numbers are written
// as numbers: only text a caller typed can carry a formula.

/** What a cell can hold: text is neutralised and quoted as needed, numbers and booleans are written as they are. */
export type CsvValue = string | number | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell: empty for null, numbers as numbers, text neutralised and quoted as needed. */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  if (typeof value === "boolean") return String(value);
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** One row with its CRLF. */
export function csvRow(values: CsvValue[]): string {
  return `${values.map(csvCell).join(",")}\r\n`;
}

/**
 * A CSV download: `text/csv` as an attachment named `filename` (a name made of safe characters by
 * the caller), never cached or sniffed as anything else.
 */
export function csvAttachment(filename: string, body: ReadableStream<Uint8Array> | string): Response {
  return new Response(body, {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="${filename}"`,
      "cache-control": "private, no-store",
      "x-content-type-options": "nosniff",
    },
  });
}
