// One place that recognises D1 / SQLite constraint failures. D1 reports them as text ("UNIQUE
// constraint failed: surveys.slug", "CHECK constraint failed: log_stream_cap"), and Drizzle wraps
// the driver's error ("Failed query: ...") with the original as `cause`, so the whole cause chain
// is read. Callers turn a match into the error their product documents.

/** The messages of an error and of every `cause` under it. */
function messagesOf(error: unknown): string[] {
  const messages: string[] = [];
  for (let e: unknown = error, depth = 0; e && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    messages.push(String((e as Error).message ?? e));
  }
  return messages;
}

/** True when the error is a UNIQUE violation, of `column` (`table.column`) when one is named. */
export function isUniqueViolation(error: unknown, column?: string): boolean {
  const needle = column ? `UNIQUE constraint failed: ${column}` : "UNIQUE constraint failed";
  return messagesOf(error).some((message) => message.includes(needle));
}

/** True when the error is a CHECK violation, of the named constraint when one is given. */
export function isCheckViolation(error: unknown, constraint?: string): boolean {
  return messagesOf(error).some((message) => message.includes("CHECK constraint failed") && (!constraint || message.includes(constraint)));
}
