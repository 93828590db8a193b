// Mail the platform sends on its own behalf (usage warnings, report shares, alert emails). It is
// written to the platform outbox and queued on MAIL_QUEUE; the mail product's consumer delivers it
// through the configured transport. Metering is the caller's: mail to addresses a team chose
// (report shares, alert emails) consumes that team's `mail` quota before it is queued; only usage
// warnings are free. Subjects and recipients often carry caller-chosen strings (an alert's name, a
// project id), so every control character is stripped here, once, before anything is stored: no
// caller can add a header line (`\r\nBcc: ...`) to the platform's mail.
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

/** Control characters (C0, DEL, C1) and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/** A caller-controlled string made safe for a subject or header: control characters become spaces. */
export function headerSafe(value: string, maxLength = 998): string {
  return value.replace(CONTROL, " ").trim().slice(0, maxLength);
}

/** Stores one platform mail message; returns its id. */
export async function queuePlatformMail(env: Env, input: PlatformMail): Promise<string> {
  const mail = { ...input, to: headerSafe(input.to, 320), subject: headerSafe(input.subject) };
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
