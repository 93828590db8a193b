// Sending, from a parsed request body to stored and queued emails: each email's fields (the zod
// validator and its hook, mail.validation.ts), the policy rules (mail.policy.ts), the verified
// sender (domains), the sandbox caps, then the store and the queue (mail.service.ts), in that
// order; the first delivery attempts start from the request's waitUntil. The routes
// (mail-send.routes.ts) read the body and answer what this returns.
import { settings } from "../../platform/config";
import type { Env } from "../../env";
import type { Principal } from "../../platform/auth";
import { ApiError, type FieldErrors } from "../../platform/errors";
import type { Background } from "../../platform/jobs/accept";
import { parseAddress } from "../../platform/mailbox";
import { acceptedMembersAmong } from "../../platform/team-members";
import { firstUnverifiedSender } from "./domains.service";
import { evaluatePolicy, forItem, policyError } from "./mail.policy";
import { MAX_BATCH } from "./mail.schemas";
import { CapError, checkCaps, createEmails, INLINE_FIRST_ATTEMPTS, type AcceptedEmail, type EmailWithBody } from "./mail.service";
import { checkEmail, missingMessage } from "./mail.validation";

/** What a send needs of its request besides the body: the caller and the request's waitUntil (none: no first attempt from the request). */
export interface SendContext {
  env: Env;
  principal: Principal;
  background: Background | null;
}

function sandboxDomain(env: Env): string {
  return settings(env).sandboxDomain;
}

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

/**
 * Sandbox mail reaches only accepted members of the team (and the sandbox simulator): an allow-listed
 * stranger, or a pending invitee, is `recipient_not_allowed` (422); in a batch the message names the
 * 1-indexed item. One read for every recipient of the request.
 */
async function requireSandboxMembers(env: Env, principal: Principal, recipients: string[][], itemOf?: (position: number) => number): Promise<void> {
  if (!principal.mail.sandbox) return;
  const simulator = `@${settings(env).sandboxDomain}`;
  const lists = recipients.map((list) => list.map((raw) => (parseAddress(raw) ?? raw).toLowerCase()).filter((address) => !address.endsWith(simulator)));
  const members = await acceptedMembersAmong(env.DB, principal.teamId, lists.flat());
  for (const [position, list] of lists.entries()) {
    const outside = list.find((address) => !members.has(address));
    if (!outside) continue;
    const error = policyError(
      "recipient_not_allowed",
      `The recipient ${outside} is not an accepted member of this team (sandbox mail goes only to the team's members)`,
    );
    throw itemOf ? forItem(error, itemOf(position)) : error;
  }
}

/**
 * Reserves the sandbox caps, then accepts the emails (mail.service.ts createEmails: the quota, their
 * bodies, their rows, the queue, the first `inline` attempts from waitUntil). The caps are given
 * back when the accept throws (the quota refused, or the store failed); a cap refusal throws
 * `capError(error)`.
 */
async function store(ctx: SendContext, accepted: AcceptedEmail[], inline: number, capError: (error: CapError) => ApiError): Promise<EmailWithBody[]> {
  let release: () => Promise<void>;
  try {
    release = await checkCaps(ctx.env, ctx.principal.teamId, ctx.principal.keyId, ctx.principal.mail, accepted.length);
  } catch (error) {
    throw error instanceof CapError ? capError(error) : error;
  }
  return createEmails(ctx.env, ctx.principal, accepted, { inline, background: ctx.background }).catch(async (error) => {
    await release();
    throw error;
  });
}

/**
 * POST /emails: a missing required field answers 400, a bad field 422 `Validation failed`, then the
 * policy, the verified sender and the caps; the email is stored `queued` and its first attempt starts.
 */
export async function sendEmail(ctx: SendContext, body: Record<string, unknown>): Promise<EmailWithBody> {
  const checked = checkEmail(body);
  if ("missing" in checked) throw ApiError.badRequest(missingMessage(checked.missing));
  if ("errors" in checked) throw ApiError.validation(checked.errors);
  const stream = evaluatePolicy(body, checked.email, ctx.principal.mail, sandboxDomain(ctx.env));
  await requireVerifiedSenders(ctx.env, ctx.principal, [checked.email.from]);
  await requireSandboxMembers(ctx.env, ctx.principal, [checked.email.to]);
  const [row] = await store(ctx, [{ email: checked.email, stream }], 1, (error) => error.error);
  return row;
}

/** Each item of a batch in request order: the email created, or the field errors it was skipped for. */
export type BatchItem = { row: EmailWithBody } | { errors: FieldErrors };

/**
 * POST /emails/batch: `emails` missing or not an array answers 400, an item that is not an object
 * or lacks a required field 422 naming its 0-indexed position; items failing field validation are
 * skipped (all of them: 422 with `details` keyed `emails.<index>.<field>`); a policy refusal of
 * any valid item refuses the whole batch, prefixed with its 1-indexed position. Answers the created
 * rows, and each item's outcome when some were skipped (null when every item was created).
 */
export async function sendEmailBatch(ctx: SendContext, body: Record<string, unknown>): Promise<{ rows: EmailWithBody[]; items: BatchItem[] | null }> {
  if (body.emails === undefined || body.emails === null) throw ApiError.badRequest("Missing required field: emails");
  if (!Array.isArray(body.emails)) throw ApiError.badRequest("emails must be an array");
  const items: unknown[] = body.emails;
  if (items.length === 0 || items.length > MAX_BATCH) {
    throw ApiError.validation({ emails: [`must contain between 1 and ${MAX_BATCH} emails`] });
  }
  const checked = items.map(checkEmail);
  checked.forEach((result, index) => {
    if ("missing" in result) throw new ApiError("validation", `Item at index ${index}: ${missingMessage(result.missing)}`);
  });

  // Field validation per item, then policy per valid item in order: the first refusal wins.
  const failures = new Map<number, FieldErrors>();
  const accepted: Array<AcceptedEmail & { index: number }> = [];
  checked.forEach((result, index) => {
    if ("errors" in result) {
      failures.set(index, result.errors);
      return;
    }
    if (!("email" in result)) return;
    try {
      accepted.push({
        index,
        email: result.email,
        stream: evaluatePolicy(items[index] as Record<string, unknown>, result.email, ctx.principal.mail, sandboxDomain(ctx.env)),
      });
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
    ctx.env,
    ctx.principal,
    accepted.map((item) => item.email.from),
    (position) => accepted[position].index + 1,
  );
  await requireSandboxMembers(
    ctx.env,
    ctx.principal,
    accepted.map((item) => item.email.to),
    (position) => accepted[position].index + 1,
  );
  // The first INLINE_FIRST_ATTEMPTS emails are attempted at once from waitUntil; the others, and
  // the retries, go through the queue.
  const rows = await store(ctx, accepted, Math.min(INLINE_FIRST_ATTEMPTS, accepted.length), (error) =>
    forItem(error.error, accepted[Math.min(error.firstOver, accepted.length - 1)].index + 1),
  );
  if (failures.size === 0) return { rows, items: null };
  const created = new Map(accepted.map((item, i) => [item.index, rows[i]]));
  return { rows, items: items.map((_, index): BatchItem => (created.has(index) ? { row: created.get(index)! } : { errors: failures.get(index)! })) };
}
