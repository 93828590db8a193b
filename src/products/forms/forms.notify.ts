// The notification mail of an accepted submission: platform mail to the form's recipients (accepted
// members only, checked when they were set), one `mail` unit per message, as alert emails are
// metered. The submission is quoted as plain text (no html part, so nothing is ever rendered),
// framed as written by a visitor, every visitor string defanged (no clickable address) and cut;
// the form's name is tenant text. When the team's mail quota is spent the submission stays stored
// and the mail is skipped (logged).
import type { Env } from "../../env";
import { ApiError } from "../../platform/errors";
import { log } from "../../platform/log";
import { defang, queuePlatformMail, tenantText, type MailContent } from "../../platform/platform-mail";
import { consumeQuota, type QuotaOwner } from "../../platform/quota";
import { signedFileUrl, type StoredFile } from "./forms.files";

/** Characters of one visitor value quoted in a mail. */
const VALUE_MAX = 2_000;
/** Characters of a visitor's field name quoted in a mail. */
const NAME_MAX = 100;

const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]+/g;

/** A visitor's text as a mail quotes it: control characters gone, defanged, cut, each line quoted. */
export function visitorText(value: string, max = VALUE_MAX): string {
  const chars = [...value.replace(/\r\n?/g, "\n").replace(CONTROL, " ")];
  const cut = chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : chars.join("");
  return defang(cut)
    .split("\n")
    .map((line, i) => (i === 0 ? line : `  > ${line}`))
    .join("\n");
}

export interface NotifiedSubmission {
  id: string;
  fields: Record<string, string | string[]>;
  files: StoredFile[];
  subject: string | null;
  replyTo: string | null;
  createdAt: string;
}

/**
 * The notification mail (platform mail kind `form_submission`): the form's name is tenant text, the
 * submission is quoted as a visitor's; `fileLinks` are the 5-minute links of `s.files`, in order.
 */
export function formSubmissionMail(form: { name: string }, s: NotifiedSubmission, fileLinks: readonly string[]): MailContent {
  return { subject: `New submission: ${tenantText(form.name)}`, text: notificationText(form, s, fileLinks) };
}

/** The text part of the notification. */
function notificationText(form: { name: string }, s: NotifiedSubmission, fileLinks: readonly string[]): string {
  const lines = [
    `A visitor submitted your form "${tenantText(form.name)}" at ${s.createdAt}.`,
    "",
    "Everything between the two lines below was written by a visitor of your site, not by Edge Platform.",
    "Treat it as you would any message from a stranger: addresses in it are shown defanged ([.] for a dot, [at] for @) and are not links.",
    "",
    "----- written by a visitor -----",
  ];
  if (s.subject) lines.push(`Subject: ${visitorText(s.subject, 200)}`);
  if (s.replyTo) lines.push(`Reply to: ${visitorText(s.replyTo, 320)}`);
  for (const [name, value] of Object.entries(s.fields)) {
    const values = Array.isArray(value) ? value : [value];
    lines.push(`${visitorText(name, NAME_MAX)}: ${values.map((v) => visitorText(v)).join(" | ")}`);
  }
  lines.push("----- end of the visitor's text -----");
  if (s.files.length > 0) {
    lines.push("", "Files (each link works for 5 minutes; the console lists them for as long as the submission is kept):");
    for (const [i, f] of s.files.entries()) lines.push(`- ${visitorText(f.name, NAME_MAX)} (${f.size} bytes): ${fileLinks[i]}`);
  }
  lines.push("", `Submission ${s.id}. You receive this because you are listed as a recipient of this form.`);
  return lines.join("\n");
}

/**
 * Queues one notification per recipient, each after taking one `mail` unit; the first refusal
 * (quota spent, meter unreachable) skips the rest. Never throws: the submission is already kept.
 */
export async function notifyRecipients(
  env: Env,
  owner: QuotaOwner,
  form: { id: string; name: string; notifyEmails: string[] },
  s: NotifiedSubmission,
): Promise<number> {
  if (form.notifyEmails.length === 0) return 0;
  let sent = 0;
  try {
    const links = await Promise.all(s.files.map((f) => signedFileUrl(env, form.id, s.id, f.id)));
    const mail = formSubmissionMail(form, s, links);
    for (const to of form.notifyEmails) {
      await consumeQuota(env, owner, "mail", 1);
      await queuePlatformMail(env, { teamId: owner.teamId, kind: "form_submission", to, ...mail });
      sent++;
    }
  } catch (error) {
    const spent = error instanceof ApiError && error.code === "monthly_quota";
    log.warn(spent ? "form notification skipped: mail quota spent" : "form notification failed", {
      form_id: form.id,
      submission_id: s.id,
      error: String(error),
    });
  }
  return sent;
}
