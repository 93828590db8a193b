// Mail the platform sends on its own behalf (usage warnings, report shares, alert emails). It is
// written to the platform outbox and queued on MAIL_QUEUE (the commit step of accepted work, jobs/commit.ts: it meters nothing); the
// mail product's consumer claims and delivers it through the configured transport. Metering is the caller's: mail to addresses a team chose
// (report shares, alert emails) consumes that team's `mail` quota before it is queued; only usage
// warnings are free. Subjects and recipients often carry caller-chosen strings (an alert's name, a
// project id), so every control character is stripped here, once, before anything is stored: no
// caller can add a header line (`\r\nBcc: ...`) to the platform's mail. Tenant text in a subject
// or body goes through `tenantText` (one line, 100 characters, never a link): the one rule of
// every template. The kinds of platform mail are a closed list (PLATFORM_MAIL_KINDS): each is one
// template, rendered by a `…Mail` function beside the code that sends it, and
// test/platform/platform-mail.test.ts holds a table of every kind, so a new template fails that
// test until it is listed there with hostile tenant text.
import type { Env } from "../env";
import { getDb } from "../db/client";
import { platformOutbox } from "../db/schema";
import { nowIso } from "./clock";
import { commit } from "./jobs/commit";
import { sendAll } from "./jobs/queues";

/** Every kind of platform mail: one template each. A kind outside this list is never stored. */
export const PLATFORM_MAIL_KINDS = [
  "console_sign_in",
  "console_sign_up",
  "console_invite",
  "usage_warning",
  "report_share",
  "alert",
  "relay_destination_disabled",
  "form_submission",
  "scan_grade_drop",
] as const;
export type PlatformMailKind = (typeof PLATFORM_MAIL_KINDS)[number];

/** What a template renders: plain text only (platform mail has no html part that could carry a link). */
export interface MailContent {
  subject: string;
  text: string;
}

export interface PlatformMail extends MailContent {
  teamId: string | null;
  kind: PlatformMailKind;
  to: string;
}

/** Control characters (C0, DEL, C1) and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/** A caller-controlled string made safe for a subject or header: control characters become spaces. */
export function headerSafe(value: string, maxLength = 998): string {
  return value.replace(CONTROL, " ").trim().slice(0, maxLength);
}

/** The longest tenant text in platform mail, in characters (the names themselves keep their limits). */
export const TENANT_TEXT_MAX = 100;

/** A URL scheme (`https://`, `ftp://`) or a scheme that needs no slashes (`javascript:`, `mailto:`). */
const SCHEME = /\b[a-z][a-z0-9+.-]*:\/\/|\b(?:javascript|mailto|tel|sms|data|file|callto|vbscript):/gi;

/**
 * A string a tenant chose (a team, alert, project or report name, a destination URL) as platform
 * mail shows it, in every template (docs/ARCHITECTURE.md "Platform mail goes only to people who
 * asked for it"): one plain line, control characters stripped, never a link, cut to
 * TENANT_TEXT_MAX characters with an ellipsis. Mail clients make links of `https://…`, `www.…`,
 * bare domain names and addresses, so the text is defanged as security notices do: a scheme
 * (`https://`, `javascript:`, `mailto:` …) is removed, a dot between a letter or digit and a letter
 * (any of the dots IDNA reads as one) becomes `[.]`, `@` becomes `[at]`: `https://evil.test/restore`
 * reads `evil[.]test/restore`. Nothing that reads as an address is left to click.
 */
export function tenantText(value: string): string {
  const defanged = defang(value.replace(CONTROL, " ").replace(/\s+/g, " ").trim());
  const chars = [...defanged];
  return chars.length <= TENANT_TEXT_MAX
    ? defanged
    : `${chars
        .slice(0, TENANT_TEXT_MAX - 1)
        .join("")
        .trimEnd()}…`;
}

/** Text with nothing a mail client makes a link of: a scheme removed, a dot before a letter → `[.]`, `@` → `[at]` (see tenantText). */
export function defang(text: string): string {
  return text
    .replace(SCHEME, "")
    .replace(/([\p{L}\p{N}])[.\u3002\uff0e\uff61](?=\p{L})/gu, "$1[.]")
    .replace(/@/g, "[at]");
}

/**
 * Stores platform mail messages `pending` in the outbox, in one D1 batch (all or none); returns
 * their ids in order.
 */
export async function storePlatformMail(env: Env, mails: PlatformMail[]): Promise<string[]> {
  if (mails.length === 0) return [];
  const unknown = mails.find((mail) => !(PLATFORM_MAIL_KINDS as readonly string[]).includes(mail.kind));
  if (unknown) throw new Error(`platform mail of an unknown kind: ${unknown.kind}`);
  const db = getDb(env.DB);
  const at = nowIso();
  const rows = mails.map((input) => ({
    id: crypto.randomUUID(),
    teamId: input.teamId,
    kind: input.kind,
    to: headerSafe(input.to, 320),
    subject: headerSafe(input.subject),
    text: input.text,
    html: null,
    status: "pending",
    createdAt: at,
    updatedAt: at,
  }));
  const [first, ...rest] = rows.map((row) => db.insert(platformOutbox).values(row));
  await db.batch([first, ...rest]);
  return rows.map((row) => row.id);
}

/** Queues stored platform mail for the mail consumer (sendAll); throws what the queue throws. */
export function enqueuePlatformMail(env: Env, ids: string[]): Promise<void> {
  return sendAll(
    env.MAIL_QUEUE,
    ids.map((id) => ({ type: "platform" as const, id })),
  );
}

/**
 * Stores one platform mail message and queues it (the commit step: a refused message is logged, the
 * row stays `pending` and the mail sweep, every minute, queues it again); returns its id.
 */
export async function queuePlatformMail(env: Env, input: PlatformMail): Promise<string> {
  return commit({
    name: "platform mail",
    store: async () => (await storePlatformMail(env, [input]))[0],
    enqueue: (id) => enqueuePlatformMail(env, [id]),
  });
}
