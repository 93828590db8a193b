// Retention clean-up of the webhook relay (hourly cron): deletes events older than their source's
// retention_days; their deliveries and attempts go with them (foreign-key cascade). Safe to run twice.
import type { Env } from "../../env";
import { nowIso } from "../../platform/clock";

const CHUNK = 500;
/** Upper bound of rows per run, so one run stays well inside the per-invocation query budget. */
const MAX_CHUNKS = 40;

/** Deletes expired events; returns how many were deleted. */
export async function purgeExpiredWebhookEvents(env: Env): Promise<number> {
  const now = nowIso();
  const statement = env.DB.prepare(
    `DELETE FROM webhook_events WHERE id IN (
       SELECT e.id FROM webhook_events e JOIN webhook_sources s ON s.id = e.source_id
       WHERE e.received_at < strftime('%Y-%m-%dT%H:%M:%fZ', ?1, '-' || s.retention_days || ' days')
       LIMIT ?2)`,
  ).bind(now, CHUNK);
  let deleted = 0;
  for (let i = 0; i < MAX_CHUNKS; i++) {
    const result = await statement.run();
    deleted += result.meta.changes;
    if (result.meta.changes < CHUNK) break;
  }
  return deleted;
}

/** The cron job signature of src/index.ts. */
export async function relayRetentionJob(env: Env): Promise<void> {
  const deleted = await purgeExpiredWebhookEvents(env);
  if (deleted > 0) console.log(JSON.stringify({ msg: "relay retention", deleted }));
}
