// Field validation of one email by zod (the send routes' 422 `Validation failed`), and the hook that
// turns a failed parse into the specification's answers: a body that is not an object or lacks
// `from`, `to` or `subject` is "missing" (400 for a single send, 422 naming the 0-indexed item of a
// batch: mail-send.service.ts), any other failure is the per-field messages. `EmailFields` is the
// validator; the document's SendEmail (mail.schemas.ts) is built from it. Null stands for absent,
// as it always did. Header values that are not strings and the stream are the policy's to judge
// (forbidden_header, invalid_stream), so the validator lets them through.
import { z } from "@hono/zod-openapi";
import type { FieldErrors } from "../../platform/errors";
import { isPlainObject, jsonCapMessage, jsonFits } from "../../platform/sizes";
import { canonicalAddress, LINE_BREAK, parseAddress } from "../../platform/mailbox";
import { HEADER_NAME, LIMITS, REQUIRED_FIELDS, TAG, type EmailInput } from "./mail.policy";

const LIST_TYPE = "must be an email address or an array of email addresses";
const TAGS_FORMAT = "must be an array of 1-64 character strings of letters, digits, '_' or '-'";
const HEADERS_TYPE = "must be an object of string values";

/** A string field: "must be a string" for any other type. */
const text = () => z.string({ error: "must be a string" });

/** One address or an array of them: at most `max`, each one mailbox (`to` needs at least one). */
function addressList(max: number, atLeastOne: boolean) {
  return z.union([z.string(), z.array(z.string())], { error: LIST_TYPE }).superRefine((value, ctx) => {
    const items = typeof value === "string" ? [value] : value;
    if (atLeastOne && items.length === 0) ctx.addIssue("must contain at least one address");
    if (items.length > max) ctx.addIssue(`must contain at most ${max} addresses`);
    for (const item of items) if (!parseAddress(item)) ctx.addIssue(`is not a valid email address: ${item.slice(0, 100)}`);
  });
}

/** Custom headers: an object of at most LIMITS.headers entries with valid names and one-line string values, LIMITS.headersBytes in all. */
const headers = z.custom<Record<string, unknown>>(isPlainObject, { error: HEADERS_TYPE }).superRefine((value, ctx) => {
  const names = Object.keys(value);
  if (names.length > LIMITS.headers) ctx.addIssue(`must have at most ${LIMITS.headers} entries`);
  for (const name of names) {
    if (!HEADER_NAME.test(name)) ctx.addIssue(`has an invalid header name: ${name.slice(0, 100)}`);
    const v = value[name];
    if (typeof v === "string" && (LINE_BREAK.test(v) || v.length > LIMITS.headerValue)) {
      ctx.addIssue(`value of ${name} must be one line of at most ${LIMITS.headerValue} characters`);
    }
  }
  if (!jsonFits(value, LIMITS.headersBytes)) ctx.addIssue(jsonCapMessage(LIMITS.headersBytes));
});

/** The fields of one email as the send routes validate them (the first broken rule of a field with a single message wins). */
export const EmailFields = z.object({
  from: text().refine((value) => parseAddress(value) !== null, "must be a valid email address"),
  to: addressList(LIMITS.recipientsPerField, true),
  subject: text()
    .refine((value) => value.trim() !== "", { error: "must not be empty", abort: true })
    .refine((value) => value.length <= LIMITS.subject, { error: `must be at most ${LIMITS.subject} characters`, abort: true })
    .refine((value) => !LINE_BREAK.test(value), "must not contain line breaks"),
  html: text()
    .refine((value) => value.length <= LIMITS.body, `must be at most ${LIMITS.body} characters`)
    .optional(),
  text: text()
    .refine((value) => value.length <= LIMITS.body, `must be at most ${LIMITS.body} characters`)
    .optional(),
  cc: addressList(LIMITS.recipientsPerField, false).optional(),
  bcc: addressList(LIMITS.recipientsPerField, false).optional(),
  reply_to: addressList(LIMITS.replyTo, false).optional(),
  headers: headers.optional(),
  stream: z.unknown().optional(),
  tags: z
    .array(z.unknown(), { error: TAGS_FORMAT })
    .refine((value) => value.every((tag) => typeof tag === "string" && TAG.test(tag)), { error: TAGS_FORMAT, abort: true })
    .refine((value) => value.length <= LIMITS.tags, `must have at most ${LIMITS.tags} entries`)
    .optional(),
});

export type CheckedEmail = { email: EmailInput } | { missing: string[] } | { errors: FieldErrors };

/**
 * The hook of one email: its required fields, then its fields by EmailFields. Answers the
 * normalised input (addresses canonical, tags without repeats), the required fields it lacks, or the
 * messages of each bad field in the validator's order.
 */
export function checkEmail(raw: unknown): CheckedEmail {
  if (!isPlainObject(raw)) return { missing: [...REQUIRED_FIELDS] };
  const input = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== null));
  const missing = REQUIRED_FIELDS.filter((field) => input[field] === undefined);
  if (missing.length) return { missing };
  const result = EmailFields.safeParse(input);
  if (!result.success) {
    const errors: FieldErrors = {};
    for (const issue of result.error.issues) (errors[String(issue.path[0])] ??= []).push(issue.message);
    return { errors };
  }
  const body = result.data;
  const list = (value: string | string[] | undefined) =>
    (value === undefined ? [] : typeof value === "string" ? [value] : value).map((item) => canonicalAddress(item) ?? item.trim());
  return {
    email: {
      from: canonicalAddress(body.from) ?? body.from.trim(),
      fromAddress: parseAddress(body.from) as string,
      to: list(body.to),
      cc: list(body.cc),
      bcc: list(body.bcc),
      replyTo: list(body.reply_to),
      subject: body.subject,
      html: body.html ?? null,
      text: body.text ?? null,
      headers: body.headers ?? {},
      tags: [...new Set(body.tags as string[] | undefined)],
      stream: body.stream,
    },
  };
}

/** "Missing required field: from" or "Missing required fields: from, to". */
export function missingMessage(missing: string[]): string {
  return missing.length === 1 ? `Missing required field: ${missing[0]}` : `Missing required fields: ${missing.join(", ")}`;
}
