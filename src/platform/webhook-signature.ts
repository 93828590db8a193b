// Standard Webhooks signing (https://www.standardwebhooks.com): the scheme of every webhook the
// platform sends (relay deliveries, survey and mail webhooks) and one the relay verifies inbound,
// whether the sender names its headers `webhook-*` or, as Svix and the providers built on it
// (Clerk, Resend, ...) do, `svix-*`. Secrets look like `whsec_<base64 key>`; the signature is
// `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`.
import { encryptSecret, fromBase64Url, hmacSha256, randomBytes, timingSafeEqual, toBase64 } from "./crypto";

export const SECRET_PREFIX = "whsec_";

/** A new signing secret: `whsec_` and 24 random bytes in base64. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + toBase64(randomBytes(24));
}

/** A new signing secret for a customer's endpoint: the plaintext (shown once) and its encryption (stored). */
export async function newSealedWebhookSecret(encryptionKey: string): Promise<{ secret: string; sealed: string }> {
  const secret = newWebhookSecret();
  return { secret, sealed: await encryptSecret(encryptionKey, secret) };
}

function secretKey(secret: string): Uint8Array {
  const material = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  try {
    return fromBase64Url(material);
  } catch {
    // A secret that is not base64 is used as raw text, so any caller-chosen secret still works.
    return new TextEncoder().encode(material);
  }
}

/** The `v1,<base64>` signature of one message. */
export async function signPayload(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  return "v1," + toBase64(await hmacSha256(secretKey(secret), `${id}.${timestamp}.${body}`));
}

/** Headers of a signed delivery: `webhook-id`, `webhook-timestamp` (Unix seconds), `webhook-signature`. */
export async function standardWebhookHeaders(secret: string, id: string, timestamp: number, body: string): Promise<Record<string, string>> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signPayload(secret, id, timestamp, body),
  };
}

/** The id, timestamp and signature of a Standard Webhooks message, as one header family carries them. */
export interface StandardWebhookFields {
  id: string | null;
  timestamp: string | null;
  signature: string | null;
}

/**
 * The Standard Webhooks fields of a request. The scheme is the same under both header names:
 * `webhook-id` / `webhook-timestamp` / `webhook-signature` (the specification) and `svix-id` /
 * `svix-timestamp` / `svix-signature` (Svix and the providers built on it). One family is read
 * whole, never a mix, so the id, timestamp and signature checked are the ones signed together: the
 * family whose signature header is present (`webhook-*` when both are), else the one whose id is.
 */
export function readStandardWebhookHeaders(headers: Headers): StandardWebhookFields {
  const prefix = headers.has("webhook-signature")
    ? "webhook-"
    : headers.has("svix-signature")
      ? "svix-"
      : headers.has("webhook-id") || !headers.has("svix-id")
        ? "webhook-"
        : "svix-";
  return { id: headers.get(`${prefix}id`), timestamp: headers.get(`${prefix}timestamp`), signature: headers.get(`${prefix}signature`) };
}

/**
 * Verifies Standard Webhooks headers: one of the space-separated `v1,` signatures must match and
 * the timestamp must lie within `toleranceSeconds` of `nowSeconds`.
 */
export async function verifyStandardWebhook(
  secret: string,
  headers: StandardWebhookFields,
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): Promise<boolean> {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
  const expected = await signPayload(secret, id, Number(timestamp), body);
  let ok = false;
  for (const candidate of signature.split(" ")) if (timingSafeEqual(candidate, expected)) ok = true;
  return ok;
}
