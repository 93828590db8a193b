// What a send request must satisfy before anything is stored, as pure functions: reading the body
// (400 for one that is not a JSON object), the limits that field validation applies
// (mail.validation.ts, by zod; addresses are parsed by platform/mailbox.ts) and the policy rules of the specification's table, evaluated in one
// fixed order (README: "Evaluation order").
import { isPlainObject } from "../../platform/sizes";
import { domainOf, parseAddress } from "../../platform/mailbox";
import { readBodyCapped } from "../../platform/body";
import type { MailKeyPolicy } from "../../db/schema";
import { MAIL_POLICY_STATUS, ApiError, MALFORMED_JSON } from "../../platform/errors";

/** The streams a message goes out on. */
export const STREAMS = ["transactional", "broadcast"] as const;
export type Stream = (typeof STREAMS)[number];

/** Body keys naming per-message values the platform sets itself (override_forbidden). */
export const PROTECTED_KEYS = [
  "id",
  "message_id",
  "team_id",
  "key_id",
  "status",
  "sandbox",
  "created_at",
  "updated_at",
  "sent_at",
  "attempts",
  "return_path",
  "dkim",
  "from_domain_verified",
] as const;

/**
 * Custom headers are an allow-list (docs/ARCHITECTURE.md "Addresses and headers"): anything else — trace and
 * authentication headers such as `Authentication-Results`, `Resent-From`, `Received`, and every
 * header the platform writes itself — is `forbidden_header`. Names compare case-insensitively.
 */
export const ALLOWED_HEADERS = ["list-unsubscribe", "list-unsubscribe-post", "in-reply-to", "references"] as const;
/** Any `X-*` header is allowed except the platform's own prefix (`x-edp-team`, ...). */
export const RESERVED_HEADER_PREFIX = "x-edp-";
/**
 * `X-*` names that mail providers read as instructions rather than pass on (docs/ARCHITECTURE.md "Custom
 * mail headers"), refused as `forbidden_header` by the token after `X-` (up to the next dash or the
 * end), with or without a dash: SendGrid's `X-SMTPAPI` (can add recipients), Postmark's `X-PM-*`,
 * Amazon SES's `X-SES-*`, Mailgun's `X-Mailgun-*`, Mandrill's `X-MC-*`, SparkPost's `X-MSYS-*`,
 * Mailjet's `X-MJ-*` and `X-Mailjet-*`, Brevo's (Sendinblue) `X-Mailin-*` and `X-Sib-*`. So
 * `X-SMTPAPI-Extra` and `X-Mailgun` are refused, while `X-PMX` or `X-Sibling` (other tokens) pass.
 */
export const PROVIDER_CONTROL_TOKENS = ["smtpapi", "pm", "ses", "mailgun", "mc", "msys", "mj", "mailjet", "mailin", "sib"] as const;

/** Whether an `x-…` name (lower case) is a provider's control header. */
function isProviderControl(lower: string): boolean {
  const token = lower.slice(2).split("-", 1)[0];
  return (PROVIDER_CONTROL_TOKENS as readonly string[]).includes(token);
}

/** True when a caller may set this header. */
export function isAllowedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  if (lower.startsWith(RESERVED_HEADER_PREFIX)) return false;
  if (lower.startsWith("x-") && isProviderControl(lower)) return false;
  return /^x-[a-z0-9-]+$/.test(lower) || (ALLOWED_HEADERS as readonly string[]).includes(lower);
}

/**
 * What a header value may not hold besides CR and LF (refused earlier as a validation error):
 * other C0 controls but tab, DEL, the C1 controls (U+0085 NEL among them) and the Unicode line and
 * paragraph separators, which some parsers and providers read as line breaks.
 */
const UNPRINTABLE_HEADER_VALUE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

/** Local parts of the sandbox domain's simulator addresses and the outcome each one produces. */
export const SIMULATOR = { delivered: "delivered", bounced: "bounced", complained: "complained" } as const;
export const SIMULATOR_LOCAL_PARTS = Object.keys(SIMULATOR);

export const REQUIRED_FIELDS = ["from", "to", "subject"] as const;

export const LIMITS = {
  recipientsPerField: 50,
  replyTo: 10,
  subject: 998,
  /** html and text each; with the other fields a stored row stays under D1's 1 MB. */
  body: 256 * 1024,
  headers: 50,
  headerValue: 998,
  /** `headers` taken together, in UTF-8 bytes of JSON (docs/ARCHITECTURE.md "Stored free-form JSON"). */
  headersBytes: 16 * 1024,
  tags: 10,
} as const;

/** The policy codes of the specification with their HTTP status (one table with every error code). */
export const POLICY_STATUS = MAIL_POLICY_STATUS;
export type PolicyCode = keyof typeof POLICY_STATUS;

export function isPolicyCode(code: string): code is PolicyCode {
  return Object.hasOwn(POLICY_STATUS, code);
}

/** A policy refusal: `{error: message, code}` with the table's status. */
export function policyError(code: PolicyCode, message: string, headers?: Record<string, string>): ApiError {
  return new ApiError(code, message, { headers });
}

/** The same refusal for item `position` (1-indexed) of a batch. */
export function forItem(error: ApiError, position: number): ApiError {
  return new ApiError(error.code, `Item ${position}: ${error.message}`, { headers: error.headers });
}

/** One email after validation, addresses normalised; `stream` is still the raw value. */
export interface EmailInput {
  from: string;
  fromAddress: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, unknown>;
  tags: string[];
  stream: unknown;
}

export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
export const TAG = /^[A-Za-z0-9_-]{1,64}$/;

/** Largest request body of the send endpoints (a full batch of 100 emails). */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** `application/json` or a `+json` type, with any parameters. */
const JSON_CONTENT_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

/**
 * Reads a request body, refusing one over MAX_REQUEST_BYTES bytes (422 on `_body`) before parsing
 * it. A body not labelled JSON (curl's default `application/x-www-form-urlencoded`, `text/plain`,
 * none) answers 400 in mail's own shape before it is read: the specification lists mail's statuses
 * (400 for a body that is not a JSON object) and 415 is not among them.
 */
export async function readBody(request: Request): Promise<string> {
  if (!JSON_CONTENT_TYPE.test(request.headers.get("content-type") ?? "")) {
    throw ApiError.badRequest("Content-Type must be application/json");
  }
  const tooLarge = () => ApiError.validation({ _body: [`must be at most ${MAX_REQUEST_BYTES / 1024 / 1024} MiB`] });
  return new TextDecoder().decode(await readBodyCapped(request, MAX_REQUEST_BYTES, tooLarge));
}

/** Parses a request body: malformed or non-object JSON answers 400. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw ApiError.badRequest(MALFORMED_JSON);
  }
  if (!isPlainObject(body)) throw ApiError.badRequest("Request body must be a JSON object");
  return body;
}

/**
 * The policy rules except the caps (which need the store), in their documented order; the first
 * broken rule is the answer. Returns the stream the message goes out on.
 */
export function evaluatePolicy(body: Record<string, unknown>, email: EmailInput, policy: MailKeyPolicy, sandboxDomain: string): Stream {
  // 1. Per-message keys the platform owns.
  const protectedKey = PROTECTED_KEYS.find((key) => Object.hasOwn(body, key));
  if (protectedKey) throw policyError("override_forbidden", `The field '${protectedKey}' is set by the platform and cannot be overridden`);

  // 2. Reserved header names and non-string header values.
  for (const [name, value] of Object.entries(email.headers)) {
    if (!isAllowedHeader(name)) {
      throw policyError("forbidden_header", `The header '${name}' is reserved and cannot be set`);
    }
    if (typeof value !== "string") throw policyError("forbidden_header", `The header '${name}' must have a string value`);
    if (UNPRINTABLE_HEADER_VALUE.test(value)) {
      throw policyError("forbidden_header", `The header '${name}' must be printable text (no control characters, line or paragraph separators)`);
    }
  }

  // 3-5. Streams.
  let stream: Stream;
  if (email.stream !== undefined && email.stream !== null) {
    if (typeof email.stream !== "string" || !(STREAMS as readonly string[]).includes(email.stream)) {
      throw policyError("invalid_stream", "stream must be either 'transactional' or 'broadcast'");
    }
    stream = email.stream as Stream;
  } else {
    if (policy.allowed_streams.length > 1) {
      throw policyError("stream_required", `This key allows several streams (${policy.allowed_streams.join(", ")}); set 'stream'`);
    }
    stream = (policy.allowed_streams[0] ?? "transactional") as Stream;
  }
  if (!policy.allowed_streams.includes(stream)) throw policyError("stream_not_allowed", `This key may not send on the '${stream}' stream`);

  // 6. Suspension.
  if (policy.suspended) throw policyError("sandbox_disabled", "This key is suspended from sending because of its bounce or complaint rate");

  const sandboxSender = domainOf(email.fromAddress) === sandboxDomain.toLowerCase();
  if (!policy.sandbox) {
    // 7. Live keys never send from the sandbox test domain.
    if (sandboxSender) throw policyError("sandbox_domain_forbidden", `Live keys cannot send from the sandbox domain ${sandboxDomain}`);
    return stream;
  }

  // 8-11. Sandbox keys.
  if (stream === "broadcast") throw policyError("sandbox_stream_forbidden", "Sandbox keys can only send on the 'transactional' stream");
  if (!sandboxSender) throw ApiError.validation({ from: [`sandbox keys must send from the ${sandboxDomain} domain`] });
  if (email.cc.length || email.bcc.length || email.replyTo.length) {
    throw policyError("sandbox_extra_recipients", "Sandbox sends cannot include cc, bcc or reply_to");
  }
  // The simulator addresses of the sandbox domain are always allowed (README: "Sandbox keys").
  const allowed = new Set([
    ...policy.allowed_recipients.map((address) => (parseAddress(address) ?? address).toLowerCase()),
    ...SIMULATOR_LOCAL_PARTS.map((local) => `${local}@${sandboxDomain.toLowerCase()}`),
  ]);
  const outside = email.to.map((raw) => (parseAddress(raw) as string).toLowerCase()).find((address) => !allowed.has(address));
  if (outside) throw policyError("recipient_not_allowed", `The recipient ${outside} is not in this sandbox key's allow-list`);
  return stream;
}
