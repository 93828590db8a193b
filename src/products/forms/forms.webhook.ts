// The signed webhook of a form: the payload of one submission (its fields, and 5-minute signed
// links to its files, never the files), signed as every platform webhook is (Standard Webhooks,
// platform/webhook-signature.ts), sent through the SSRF guard with a timeout, the answer read up
// to 1 KB. The form's store calls it from its alarm and keeps the attempts.
import type { Env } from "../../env";
import { decryptSecret } from "../../platform/crypto";
import { readCapped } from "../../platform/outbound";
import { safeFetch, ssrfOptions } from "../../platform/ssrf";
import { standardWebhookHeaders } from "../../platform/webhook-signature";
import { signedFileUrl, type StoredFile } from "./forms.files";

/** How long one attempt may take. */
export const DELIVERY_TIMEOUT_MS = 15_000;
/** Bytes of a receiver's answer kept with the attempt. */
const ANSWER_EXCERPT_BYTES = 1024;

/** What the store hands over of one submission. */
export interface WebhookSubmission {
  id: string;
  fields: Record<string, string | string[]>;
  files: StoredFile[];
  subject: string | null;
  reply_to: string | null;
  created_at: string;
}

/** The form's webhook as D1 holds it now (a changed URL applies to the next attempt). */
export interface WebhookTarget {
  formId: string;
  formName: string;
  url: string;
  sealedSecret: string;
}

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
}

/** The JSON body of a delivery. */
export async function webhookBody(env: Env, target: Pick<WebhookTarget, "formId" | "formName">, s: WebhookSubmission): Promise<string> {
  const files = await Promise.all(s.files.map(async (f) => ({ ...f, url: await signedFileUrl(env, target.formId, s.id, f.id), url_expires_in_seconds: 300 })));
  return JSON.stringify({
    type: "form.submission",
    timestamp: s.created_at,
    data: {
      form_id: target.formId,
      form_name: target.formName,
      submission: { id: s.id, fields: s.fields, files, subject: s.subject, reply_to: s.reply_to, created_at: s.created_at },
    },
  });
}

/**
 * One attempt: signed with the form's secret; the message id is the submission's, so a receiver
 * that keeps ids sees a retry or a re-send of the same submission as the same message.
 */
export async function sendWebhook(env: Env, target: WebhookTarget, s: WebhookSubmission, nowSeconds: number): Promise<AttemptResult> {
  const started = Date.now();
  try {
    const secret = await decryptSecret(env.ENCRYPTION_KEY, target.sealedSecret, env.ENCRYPTION_KEY_PREVIOUS);
    const body = await webhookBody(env, target, s);
    const headers = {
      "content-type": "application/json",
      "user-agent": "EdgePlatform-Forms/1.0",
      ...(await standardWebhookHeaders(secret, s.id, nowSeconds, body)),
    };
    const response = await safeFetch(target.url, { method: "POST", headers, body }, { ...ssrfOptions(env), timeoutMs: DELIVERY_TIMEOUT_MS });
    const text = await readCapped(response, ANSWER_EXCERPT_BYTES);
    const ok = response.status >= 200 && response.status < 300;
    return { ok, statusCode: response.status, durationMs: Date.now() - started, error: ok ? null : `HTTP ${response.status}`, responseBody: text };
  } catch (error) {
    const name = (error as Error)?.name;
    const message = name === "TimeoutError" ? `timeout after ${DELIVERY_TIMEOUT_MS / 1000} s` : String((error as Error)?.message ?? error).slice(0, 300);
    return { ok: false, statusCode: null, durationMs: Date.now() - started, error: message, responseBody: null };
  }
}
