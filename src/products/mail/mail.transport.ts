// The transports a message leaves through (MAIL_TRANSPORT): `outbox` records it as delivered
// locally (the sandbox simulator addresses produce bounces and complaints), `http` posts it as JSON
// to the mail provider at MAIL_HTTP_URL with MAIL_HTTP_TOKEN. Any other value (`off`, which
// `npm run deploy:setup` writes for production when no provider is given, or a typo) sends nothing
// and fails each message for good, saying why: production mail is never marked delivered unsent.
import { settings } from "../../platform/config";
import { readCapped } from "../../platform/outbound";
import type { Env } from "../../env";
import { domainOf, parseAddress } from "../../platform/mailbox";
import { SIMULATOR } from "./mail.policy";

export interface OutgoingMail {
  id: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  tags: string[];
  stream: string;
}

/** Statuses a transport can report after it accepted a message. */
export type AcceptedStatus = "sent" | "delivered" | "bounced" | "complained";

export type DeliveryOutcome =
  | { ok: true; status: AcceptedStatus; providerId: string | null; detail: string | null }
  /** `retry`: worth another attempt (network, 429, 5xx); else the provider refused it for good. */
  | { ok: false; retry: boolean; error: string };

export const PROVIDER_TIMEOUT_MS = 15_000;

export async function deliver(env: Env, mail: OutgoingMail): Promise<DeliveryOutcome> {
  const transport = settings(env).mailTransport;
  if (transport === "http") return deliverHttp(env, mail);
  if (transport === "outbox") return deliverOutbox(env, mail);
  return {
    ok: false,
    retry: false,
    error: `no mail transport: MAIL_TRANSPORT is "${transport}" (set "http" with MAIL_HTTP_URL: npm run deploy:setup -- --mail-url <provider URL>)`,
  };
}

/** Outbox: nothing leaves the platform; the message is delivered unless it targets a simulator. */
function deliverOutbox(env: Env, mail: OutgoingMail): DeliveryOutcome {
  const sandboxDomain = settings(env).sandboxDomain;
  for (const raw of [...mail.to, ...mail.cc, ...mail.bcc]) {
    const address = parseAddress(raw)?.toLowerCase();
    if (!address || !sandboxDomain || domainOf(address) !== sandboxDomain) continue;
    const local = address.slice(0, address.lastIndexOf("@"));
    if (local === SIMULATOR.bounced) return { ok: true, status: "bounced", providerId: null, detail: `${address}: simulated hard bounce` };
    if (local === SIMULATOR.complained) return { ok: true, status: "complained", providerId: null, detail: `${address}: simulated spam complaint` };
  }
  return { ok: true, status: "delivered", providerId: null, detail: "stored in the local outbox" };
}

/**
 * HTTP provider: `POST MAIL_HTTP_URL` with a JSON body and `Authorization: Bearer MAIL_HTTP_TOKEN`;
 * `Idempotency-Key` is the message id so a retried request cannot send twice. A 2xx answer may
 * carry `{id, status}` with status `delivered`, `bounced` or `complained`; otherwise it is `sent`.
 */
async function deliverHttp(env: Env, mail: OutgoingMail): Promise<DeliveryOutcome> {
  if (!env.MAIL_HTTP_URL) return { ok: false, retry: true, error: "MAIL_HTTP_URL is not configured" };
  let response: Response;
  try {
    response = await fetch(env.MAIL_HTTP_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${env.MAIL_HTTP_TOKEN ?? ""}`,
        "idempotency-key": mail.id,
      },
      body: JSON.stringify({
        id: mail.id,
        from: mail.from,
        to: mail.to,
        cc: mail.cc,
        bcc: mail.bcc,
        reply_to: mail.replyTo,
        subject: mail.subject,
        html: mail.html,
        text: mail.text,
        headers: mail.headers,
        tags: mail.tags,
        stream: mail.stream,
      }),
      redirect: "manual",
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    });
  } catch (error) {
    return { ok: false, retry: true, error: `provider unreachable: ${String(error).slice(0, 200)}` };
  }
  const text = await readCapped(response);
  if (!response.ok) {
    const retry = response.status === 429 || response.status >= 500 || response.status === 408;
    return { ok: false, retry, error: `provider answered HTTP ${response.status}: ${text.slice(0, 200)}` };
  }
  let answer: { id?: unknown; status?: unknown } = {};
  try {
    answer = JSON.parse(text) ?? {};
  } catch {
    // A provider that answers 2xx without JSON accepted the message all the same.
  }
  const status: AcceptedStatus = answer.status === "delivered" || answer.status === "bounced" || answer.status === "complained" ? answer.status : "sent";
  const providerId = typeof answer.id === "string" ? answer.id.slice(0, 200) : null;
  return { ok: true, status, providerId, detail: `provider answered HTTP ${response.status}` };
}
