// The raw SQL of a key's "last used". Raw because Drizzle cannot say it: an UPDATE … FROM json_each
// (one bound value carries the whole batch), guarded so a key's row changes at most once a minute
// whatever other isolates do.
const TOUCH_KEYS = `UPDATE api_keys SET last_used_at = j.value->>1
  FROM json_each(?1) AS j
  WHERE api_keys.id = j.value->>0 AND (api_keys.last_used_at IS NULL OR api_keys.last_used_at <= j.value->>2)`;

/** Moves each key's last_used_at to its use, where the stored one is older than the row's guard: rows are `[keyId, usedAtIso, guardIso]`. */
export async function touchKeys(d1: D1Database, rows: Array<[keyId: string, usedAt: string, notAfter: string]>): Promise<void> {
  await d1.prepare(TOUCH_KEYS).bind(JSON.stringify(rows)).run();
}
