// What the relay reads from an inbound webhook, per provider: the signature check (constant time),
// the event type and the provider's event id; plus the destination filter and the header filter.
// Pure functions over strings and headers, no database.
import { hmacSha256, sha256Hex, timingSafeEqual, toHex } from "../../platform/crypto";
import { readStandardWebhookHeaders, verifyStandardWebhook } from "../../platform/webhook-signature";
import type { Provider } from "./relay.schemas";

/** Stripe's and Standard Webhooks' tolerance between the signed timestamp and now. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface InboundRequest {
  headers: Headers;
  body: string;
}

/** True when the request carries a valid signature of `provider` made with `secret`. */
export async function verifySignature(provider: Provider, secret: string, request: InboundRequest, nowSeconds: number): Promise<boolean> {
  const { headers, body } = request;
  switch (provider) {
    case "stripe":
      return verifyStripe(secret, headers.get("stripe-signature"), body, nowSeconds);
    case "github":
      return verifyHexHmac(secret, stripPrefix(headers.get("x-hub-signature-256"), "sha256=", true), body);
    case "standard":
      // `webhook-*` or Svix's `svix-*` headers: the same scheme under two names.
      return verifyStandardWebhook(secret, readStandardWebhookHeaders(headers), body, nowSeconds, SIGNATURE_TOLERANCE_SECONDS);
    case "generic":
      return verifyHexHmac(secret, stripPrefix(headers.get("x-signature"), "sha256=", false), body);
  }
}

/** `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]` over `<t>.<body>`. */
async function verifyStripe(secret: string, header: string | null, body: string, nowSeconds: number): Promise<boolean> {
  if (!header) return false;
  let timestamp: string | null = null;
  const candidates: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === "t") timestamp = value;
    else if (key === "v1") candidates.push(value.toLowerCase());
  }
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || candidates.length === 0) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) return false;
  const expected = toHex(await hmacSha256(secret, `${timestamp}.${body}`));
  let ok = false;
  // Every candidate is compared, so the time does not reveal which one matched.
  for (const candidate of candidates) if (timingSafeEqual(candidate, expected)) ok = true;
  return ok;
}

async function verifyHexHmac(secret: string, signature: string | null, body: string): Promise<boolean> {
  if (!signature) return false;
  const expected = toHex(await hmacSha256(secret, body));
  return timingSafeEqual(signature.trim().toLowerCase(), expected);
}

function stripPrefix(value: string | null, prefix: string, required: boolean): string | null {
  if (value === null) return null;
  if (value.toLowerCase().startsWith(prefix)) return value.slice(prefix.length);
  return required ? null : value;
}

export interface EventIdentity {
  type: string | null;
  providerEventId: string | null;
}

const MAX_IDENTITY_LENGTH = 200;

/**
 * The event type and the provider's event id of an event on an *unsigned* source, each from where
 * the provider puts it (anyone may send anything there: headers are as good as the body).
 */
export function eventIdentity(provider: Provider, headers: Headers, body: string, contentType: string | null): EventIdentity {
  const json = contentType?.toLowerCase().includes("json") || looksLikeJson(body) ? parseObject(body) : null;
  const field = (name: string) => (json && typeof json[name] === "string" ? (json[name] as string) : null);
  let type: string | null;
  let id: string | null;
  switch (provider) {
    case "github":
      type = headers.get("x-github-event");
      id = headers.get("x-github-delivery");
      break;
    case "stripe":
      type = field("type");
      id = field("id");
      break;
    case "standard":
      type = field("type");
      // The id of the family the signature was checked in (webhook-* or svix-*).
      id = readStandardWebhookHeaders(headers).id;
      break;
    case "generic":
      type = field("type") ?? headers.get("x-event-type");
      id = headers.get("x-event-id") ?? headers.get("webhook-id") ?? headers.get("svix-id") ?? headers.get("idempotency-key");
      break;
  }
  return { type: clip(type), providerEventId: clip(id) };
}

/**
 * The identity of an event on a *signed* source (docs/ARCHITECTURE.md "A signed body is accepted once per
 * source"): only what the provider's signature covers decides it, so a captured request sent again
 * with other headers is a duplicate while the first is retained.
 * - `stripe`: the signature covers `<t>.<body>`: the body's `id`, else the body's SHA-256.
 * - `standard`: the signature covers `<id>.<timestamp>.<body>`: the signed message id.
 * - `github`: the signature covers the body only; `x-github-delivery` is unsigned, so the id is the
 *   body's SHA-256. The type still comes from `x-github-event` (GitHub puts it nowhere else), which
 *   is unsigned: it is trusted only because the identity is the body, so a captured body re-sent
 *   with another event name is a duplicate and never reaches a filter a second time. A body that
 *   was never received cannot be signed by anyone but GitHub.
 * - `generic`: the signature covers the body only: `type` and `id` from the body, else the body's
 *   SHA-256 (a sender that means to send the same content twice puts an `id` in it).
 */
export async function signedIdentity(provider: Provider, headers: Headers, body: string, contentType: string | null): Promise<EventIdentity> {
  const json = contentType?.toLowerCase().includes("json") || looksLikeJson(body) ? parseObject(body) : null;
  const field = (name: string) => (json && typeof json[name] === "string" ? (json[name] as string) : null);
  const bodyHash = async () => `sha256:${await sha256Hex(body)}`;
  switch (provider) {
    case "stripe":
    case "generic":
      return { type: clip(field("type")), providerEventId: clip(field("id")) ?? (await bodyHash()) };
    case "standard":
      return { type: clip(field("type")), providerEventId: clip(readStandardWebhookHeaders(headers).id) ?? (await bodyHash()) };
    case "github":
      return { type: clip(headers.get("x-github-event")), providerEventId: await bodyHash() };
  }
}

function clip(value: string | null): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed.slice(0, MAX_IDENTITY_LENGTH) : null;
}

function looksLikeJson(body: string): boolean {
  return body.trimStart().startsWith("{");
}

function parseObject(body: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * True when a destination's filter admits an event type. An empty filter admits everything, `*`
 * admits everything, `invoice.*` admits every type starting with `invoice.`, anything else must
 * match exactly. An event without a type is admitted only by an empty filter or `*`.
 */
export function filterAdmits(filter: readonly string[], type: string | null): boolean {
  if (filter.length === 0) return true;
  return filter.some((entry) => {
    if (entry === "*") return true;
    if (type === null) return false;
    return entry.endsWith("*") ? type.startsWith(entry.slice(0, -1)) : type === entry;
  });
}

/** Headers never stored or forwarded: credentials, hop-by-hop and edge-added ones. */
const DROPPED_HEADERS = new Set([
  "authorization",
  "cookie",
  "set-cookie",
  "proxy-authorization",
  "host",
  "content-length",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "upgrade",
  "accept-encoding",
  "forwarded",
  "x-real-ip",
  "true-client-ip",
]);
const DROPPED_PREFIXES = ["cf-", "x-forwarded-", "proxy-"];
/** Inbound signature headers named exactly: Stripe's and the generic source's. */
const SIGNATURE_HEADERS = new Set(["stripe-signature", "x-signature"]);
/** Whole families: Standard Webhooks, Svix, GitHub (`x-hub-signature`, `x-hub-signature-256`, any later one). */
const SIGNATURE_PREFIXES = ["webhook-", "svix-", "x-hub-signature"];

/**
 * True for a header of an inbound signature family: stored with the event for inspection, never
 * forwarded. A delivery carries only the relay's own `webhook-*` signature; a sender's signature
 * left beside it would be checked first by verifiers that read several families (the `svix`
 * library reads `svix-*` before `webhook-*`) and make the relay's valid delivery look forged.
 */
export function isInboundSignatureHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return SIGNATURE_HEADERS.has(lower) || SIGNATURE_PREFIXES.some((prefix) => lower.startsWith(prefix));
}
const MAX_HEADERS = 50;
const MAX_HEADER_VALUE = 1024;

/** The headers kept with an event: at most 50, values cut at 1 KB, sensitive ones dropped. */
export function storedHeaders(headers: Headers): Record<string, string> {
  const kept: Record<string, string> = {};
  let count = 0;
  headers.forEach((value, key) => {
    const name = key.toLowerCase();
    if (count >= MAX_HEADERS || DROPPED_HEADERS.has(name) || DROPPED_PREFIXES.some((p) => name.startsWith(p))) return;
    kept[name] = value.slice(0, MAX_HEADER_VALUE);
    count++;
  });
  return kept;
}
