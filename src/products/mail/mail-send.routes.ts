// Mail routes of sending: one email (POST /emails) and a batch (POST /emails/batch). They parse
// their body by hand, so malformed JSON and missing required fields answer 400 while invalid fields
// answer 422; they are `.openapi` routes like the others (route and handler in one call) whose body
// is documented by reference, so no automatic validator stands in front of the hand parser.
// Validation and policy (mail.policy.ts), the verified-sender check (domains), the sandbox caps and
// the store (mail.service.ts) run in that order; the first delivery attempt starts from waitUntil.
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv, Env } from "../../env";
import type { Principal } from "../../platform/auth";
import { ApiError, type FieldErrors } from "../../platform/errors";
import { dataResponse, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { waitUntilOf } from "../../platform/request-context";
import { firstUnverifiedSender } from "../domains/domains.service";
import { sendFirstAttempts } from "./mail.consumer";
import { evaluatePolicy, forItem, missingFields, missingMessage, parseJsonObject, policyError, readBody, validateEmail } from "./mail.policy";
import { BatchItemFailure, EmailSchema, ErrorBody, MAX_BATCH, PolicyErrorBody, SendBatchBody, SendEmailBody, ValidationErrorBody } from "./mail.schemas";
import { CapError, checkCaps, createEmails, emailView, INLINE_FIRST_ATTEMPTS, type AcceptedEmail } from "./mail.service";
import { route } from "./mail.openapi";

/**
 * A live key sends only from domains verified for its team (403 `domain_not_verified`; in a batch
 * the message names the 1-indexed item). Sandbox keys are held to the sandbox domain by the policy.
 */
async function requireVerifiedSenders(env: Env, principal: Principal, senders: string[], itemOf?: (position: number) => number): Promise<void> {
  if (principal.mail.sandbox) return;
  const position = await firstUnverifiedSender(env, principal.teamId, senders);
  if (position < 0) return;
  const error = policyError("domain_not_verified", "The sender's domain is not verified for this team; add it under /api/v1/domains and verify it");
  throw itemOf ? forItem(error, itemOf(position)) : error;
}

function sandboxDomain(c: Context<AppEnv>): string {
  return c.env.SANDBOX_DOMAIN || "sandbox.edge-platform.dev";
}

const sendErrors = {
  400: jsonResponse("Malformed or non-object JSON, or a missing `from`, `to` or `subject`", ErrorBody),
  403: jsonResponse("Insufficient scope (`{error}`), or a policy refusal (`{error, code}`)", PolicyErrorBody),
  422: jsonResponse("Validation failed (`{error, details}`) or a policy refusal (`{error, code}`)", ValidationErrorBody),
  429: jsonResponse("Rate limit (`{error, retry_after}`), monthly quota (`{error}`) or sandbox cap (`{error, code}`)", PolicyErrorBody),
};

const policyDescription =
  "Rules are evaluated in a fixed order and the first broken one answers: 400 (JSON, required fields), 422 field validation, then override_forbidden, forbidden_header, invalid_stream, stream_required, stream_not_allowed, sandbox_disabled, sandbox_domain_forbidden (live keys), sandbox_stream_forbidden, sandbox sender domain (422 validation on `from`), sandbox_extra_recipients, recipient_not_allowed, hourly_cap_exceeded, daily_cap_exceeded, then the monthly `mail` quota.";

export const mailSendRouter = createRouter();

/**
 * The request body of a send route, in the document only: a reference to the registered schema,
 * so @hono/zod-openapi adds no validator of its own. The handlers parse by hand because the spec
 * answers 400 for malformed JSON and missing required fields but 422 for bad fields, reading at
 * most 10 MiB as it arrives, which the automatic validator cannot do. mail.document.test.ts holds
 * the registered schema and the hand validator together.
 */
/** The bodies the reference shows and sends: they succeed as sent with `npm start`'s demo key (example.com is verified for its team). */
const EXAMPLES = {
  SendEmail: {"from": "Acme <app@example.com>", "to": "ada@example.com", "subject": "Welcome to Acme", "text": "Hello Ada, your account is ready.", "stream": "transactional"},
  SendEmailBatch: {"emails": [{"from": "Acme <app@example.com>", "to": "ada@example.com", "subject": "Welcome to Acme", "text": "Hello Ada, your account is ready.", "stream": "transactional"}, {"from": "app@example.com", "to": ["grace@example.com"], "subject": "Your receipt", "html": "<p>Thanks for your order.</p>", "stream": "transactional"}]},
};

function documentedBody(name: "SendEmail" | "SendEmailBatch") {
  return { required: true, content: { "application/json": { schema: { $ref: `#/components/schemas/${name}` }, example: EXAMPLES[name] } } };
}
mailSendRouter.openAPIRegistry.register("SendEmail", SendEmailBody);
mailSendRouter.openAPIRegistry.register("SendEmailBatch", SendBatchBody);

const sendRoute = route({
  method: "post",
  path: "/",
  operationId: "sendEmail",
  summary: "Send an email",
  description: `Stores the message as \`queued\` and delivers it through the configured transport. Consumes one unit of the \`mail\` quota. ${policyDescription}`,
  scope: "mail:send",
  idempotent: true,
  request: { body: documentedBody("SendEmail") },
  responses: { 201: dataResponse("The stored message (status `queued`)", EmailSchema), ...sendErrors },
});
mailSendRouter.openapi(sendRoute, async (c) => {
  const principal = c.get("principal");
  const body = parseJsonObject(await readBody(c.req.raw));
  const missing = missingFields(body);
  if (missing.length) throw ApiError.badRequest(missingMessage(missing));
  const result = validateEmail(body);
  if ("errors" in result) throw ApiError.validation(result.errors);
  const stream = evaluatePolicy(body, result.email, principal.mail, sandboxDomain(c));
  await requireVerifiedSenders(c.env, principal, [result.email.from]);
  let release: () => Promise<void>;
  try {
    release = await checkCaps(c.env, principal.keyId, principal.mail, 1);
  } catch (error) {
    throw error instanceof CapError ? error.error : error;
  }
  // The first delivery attempt starts now, in the background; the answer is built from the row as
  // stored, so it still says `queued`. The queue message, delayed past the attempt's lease, retries.
  const waitUntil = waitUntilOf(c);
  const [row] = await createEmails(c.env, principal, [{ email: result.email, stream }], { inlineFirstAttempts: waitUntil ? 1 : 0 }).catch(async (error) => {
    await release();
    throw error;
  });
  waitUntil?.(sendFirstAttempts(c.env, [row.id]));
  return c.json({ data: emailView(row, [{ status: "queued", detail: null, createdAt: row.createdAt }]) }, 201);
});

const batchRoute = route({
  method: "post",
  path: "/batch",
  operationId: "sendEmailBatch",
  summary: "Send up to 100 emails in one request",
  description:
    "`{emails: [...]}`, 1 to 100 items of the POST /emails body. One request for the rate limit; one `mail` quota unit per created email. " +
    "A missing or non-array `emails` answers 400; an item that is not an object or lacks `from`, `to` or `subject` answers 422 `{error}` naming its 0-indexed position. " +
    "Items that fail field validation are skipped and reported as `{status: 422, errors}` in a 207 answer (all items invalid: 422 with `details` keyed `emails.<index>.<field>`). " +
    "An item breaking a policy rule refuses the whole batch with that policy error, its message prefixed `Item <n>: ` (1-indexed); nothing is stored. Sandbox caps count the valid items in order.",
  scope: "mail:send",
  idempotent: true,
  request: { body: documentedBody("SendEmailBatch") },
  responses: {
    201: dataResponse("Every email created, in request order", z.array(EmailSchema)),
    207: dataResponse("Some items failed validation: created emails and `{status: 422, errors}` in request order", z.array(z.union([EmailSchema, BatchItemFailure]))),
    ...sendErrors,
  },
});
mailSendRouter.openapi(batchRoute, async (c) => {
  const principal = c.get("principal");
  const body = parseJsonObject(await readBody(c.req.raw));
  if (body.emails === undefined || body.emails === null) throw ApiError.badRequest("Missing required field: emails");
  if (!Array.isArray(body.emails)) throw ApiError.badRequest("emails must be an array");
  const items: unknown[] = body.emails;
  if (items.length === 0 || items.length > MAX_BATCH) {
    throw ApiError.validation({ emails: [`must contain between 1 and ${MAX_BATCH} emails`] });
  }
  items.forEach((item, index) => {
    const missing = missingFields(item);
    if (missing.length) throw new ApiError("validation", `Item at index ${index}: ${missingMessage(missing)}`);
  });

  // Field validation per item, then policy per valid item in order: the first refusal wins.
  const failures = new Map<number, FieldErrors>();
  const accepted: Array<AcceptedEmail & { index: number }> = [];
  items.forEach((item, index) => {
    const raw = item as Record<string, unknown>;
    const result = validateEmail(raw);
    if ("errors" in result) {
      failures.set(index, result.errors);
      return;
    }
    try {
      accepted.push({ index, email: result.email, stream: evaluatePolicy(raw, result.email, principal.mail, sandboxDomain(c)) });
    } catch (error) {
      // The sandbox sender-domain rule answers the Validation shape: the item is set aside like
      // any other invalid item.
      if (error instanceof ApiError && error.code === "validation" && error.details) {
        failures.set(index, error.details);
        return;
      }
      throw error instanceof ApiError ? forItem(error, index + 1) : error;
    }
  });
  if (accepted.length === 0) {
    const details: FieldErrors = {};
    for (const [index, errors] of failures) for (const [field, messages] of Object.entries(errors)) details[`emails.${index}.${field}`] = messages;
    throw ApiError.validation(details);
  }
  await requireVerifiedSenders(
    c.env,
    principal,
    accepted.map((item) => item.email.from),
    (position) => accepted[position].index + 1,
  );
  let release: () => Promise<void>;
  try {
    release = await checkCaps(c.env, principal.keyId, principal.mail, accepted.length);
  } catch (error) {
    if (error instanceof CapError) throw forItem(error.error, accepted[Math.min(error.firstOver, accepted.length - 1)].index + 1);
    throw error;
  }
  // The first INLINE_FIRST_ATTEMPTS emails are attempted at once from waitUntil; the others, and
  // the retries, go through the queue.
  const waitUntil = waitUntilOf(c);
  const inline = waitUntil ? Math.min(INLINE_FIRST_ATTEMPTS, accepted.length) : 0;
  const rows = await createEmails(c.env, principal, accepted, { inlineFirstAttempts: inline }).catch(async (error) => {
    await release();
    throw error;
  });
  if (inline > 0) waitUntil?.(sendFirstAttempts(c.env, rows.slice(0, inline).map((row) => row.id)));
  // Every item created: 201 with the emails; some skipped: 207 with each item's outcome in order.
  if (failures.size === 0) return c.json({ data: rows.map((row) => emailView(row)) }, 201);
  const created = new Map(accepted.map((item, i) => [item.index, rows[i]]));
  const data = items.map((_, index) => {
    const row = created.get(index);
    return row ? emailView(row) : { status: 422 as const, errors: failures.get(index) as FieldErrors };
  });
  return c.json({ data }, 207);
});
