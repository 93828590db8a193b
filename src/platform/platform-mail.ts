// Mail the platform sends on its own behalf (usage warnings, report shares, alert emails). It is
// written to the platform outbox and queued on MAIL_QUEUE; the mail product's consumer delivers it
// through the configured transport. It consumes no quota.
import type { Env } from "../env";
import { nowIso } from "./clock";

export interface PlatformMail {
  teamId: string | null;
  kind: "usage_warning" | "report_share" | "alert" | string;
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** Stores one platform mail message; returns its id. */
export async function queuePlatformMail(env: Env, mail: PlatformMail): Promise<string> {
  const id = crypto.randomUUID();
  await env.DB.prepare(
    "INSERT INTO platform_outbox (id, team_id, kind, \"to\", subject, text, html, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)",
  )
    .bind(id, mail.teamId, mail.kind, mail.to, mail.subject, mail.text, mail.html ?? null, nowIso())
    .run();
  try {
    await env.MAIL_QUEUE.send({ type: "platform", id });
  } catch (error) {
    // The row stays `pending`; the mail sweep (hourly cron) queues it again.
    console.error(JSON.stringify({ msg: "platform mail enqueue failed", id, error: String(error) }));
  }
  return id;
}
