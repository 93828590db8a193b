// The one SSRF guard for outbound calls to user-supplied URLs (webhook destinations, chat
// webhooks, alert webhooks, push endpoints, redirect URLs). Workers cannot resolve DNS before a
// fetch, so the guard judges the URL itself: scheme, literal IP ranges, and names that point
// inside a network. Redirects are never followed blindly: each hop is judged again.

import ipaddr from "ipaddr.js";
import { ApiError } from "./errors";
import { settings } from "./config";

export interface SsrfOptions {
  /**
   * ALLOW_PRIVATE_TARGETS: when true, plain http and loopback targets are allowed (local dev and
   * tests). Private, link-local, metadata and every other special range stay refused.
   */
  allowPrivate: boolean;
}

/**
 * Refuses a caller's target URL that the guard would refuse at send time, with the product's
 * validation error on `field` (422), so a bad webhook or destination URL fails when it is saved.
 */
export function assertPublicUrl(env: { ALLOW_PRIVATE_TARGETS?: string }, url: string, field = "url"): void {
  const reason = checkUrl(url, ssrfOptions(env));
  if (reason) throw ApiError.validation({ [field]: [reason] });
}

/** Reads the ALLOW_PRIVATE_TARGETS var (src/platform/config.ts). */
export function ssrfOptions(env: { ALLOW_PRIVATE_TARGETS?: string }): SsrfOptions {
  return { allowPrivate: settings(env).allowPrivateTargets };
}

const INTERNAL = "must not point to a private or internal address";
const LOOPBACK_NAMES = [/^localhost$/, /\.localhost$/];
const INTERNAL_NAMES = [/\.local$/, /\.internal$/, /\.home\.arpa$/, /^metadata(\.|$)/, /\.arpa$/];

/**
 * Classifies a literal IP address (already normalised by the URL parser: decimal, octal and hex
 * IPv4 spellings arrive as dotted quads). ipaddr.js names every special range (private,
 * link-local, carrier-grade NAT, unique-local, site-local, NAT64, 6to4, Teredo, reserved…); only
 * plain `unicast` is a public address. Addresses that embed an IPv4 address are judged by it.
 */
function ipClass(host: string): "public" | "loopback" | "internal" {
  let address = ipaddr.parse(host);
  if (address.kind() === "ipv6") {
    const v6 = address as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) address = v6.toIPv4Address();
    // IPv4-compatible addresses (::a.b.c.d, deprecated by RFC 4291) are never legitimate targets.
    else if (v6.parts.slice(0, 6).every((part) => part === 0) && v6.range() !== "loopback") return "internal";
  }
  const range = address.range();
  if (range === "unicast") return "public";
  return range === "loopback" ? "loopback" : "internal";
}

/** Returns why a URL is refused, or null when it may be called. */
export function checkUrl(raw: string, options: SsrfOptions): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be a valid URL";
  }
  if (url.username || url.password) return "must not contain credentials";
  if (url.protocol !== "https:" && !(options.allowPrivate && url.protocol === "http:")) return "must use https";
  // Trailing dots name the same host (`localhost.`, `metadata.google.internal.`).
  const host = url.hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "")
    .toLowerCase();
  if (!host) return "must have a host";
  if (ipaddr.isValid(host)) {
    if (!/^[0-9.]+$/.test(host) && !host.includes(":")) return INTERNAL;
    const kind = ipClass(host);
    if (kind === "public" || (kind === "loopback" && options.allowPrivate)) return null;
    return INTERNAL;
  }
  if (LOOPBACK_NAMES.some((re) => re.test(host))) return options.allowPrivate ? null : INTERNAL;
  if (INTERNAL_NAMES.some((re) => re.test(host))) return INTERNAL;
  // Single-label names resolve inside a network (search domains), never on the internet.
  if (!host.includes(".")) return INTERNAL;
  // A dotted all-numeric name that is not a valid address (e.g. 1.2.3.4.5).
  if (/^[0-9.]+$/.test(host)) return INTERNAL;
  return null;
}

/**
 * Returns why an address a host name resolved to is refused, or null when it may be called: the
 * same ranges as a literal address in a URL (the audit scan checks each hop's DNS answers with it).
 */
export function checkAddress(address: string, options: SsrfOptions): string | null {
  if (!ipaddr.isValid(address)) return "is not an IP address";
  const kind = ipClass(address);
  if (kind === "public" || (kind === "loopback" && options.allowPrivate)) return null;
  return INTERNAL;
}

/** True when the URL may be called. */
export function isSafeUrl(raw: string, options: SsrfOptions): boolean {
  return checkUrl(raw, options) === null;
}

export interface SafeFetchOptions extends SsrfOptions {
  /** Milliseconds before the call is abandoned. */
  timeoutMs: number;
  /** How many redirects to follow (each hop is checked again). 0: a 3xx is returned as is. */
  maxRedirects?: number;
}

/** Thrown when a URL or a redirect hop is refused by the guard. */
export class BlockedUrlError extends Error {
  constructor(reason: string) {
    super(`URL refused: ${reason}`);
    this.name = "BlockedUrlError";
  }
}

/**
 * fetch() for user-supplied URLs: the guard on every hop, a hard timeout, no automatic redirects.
 * Network failures and timeouts reject (TimeoutError / TypeError); refused URLs throw BlockedUrlError.
 */
export async function safeFetch(url: string, init: RequestInit, options: SafeFetchOptions): Promise<Response> {
  let target = url;
  let hops = options.maxRedirects ?? 0;
  const signal = AbortSignal.timeout(options.timeoutMs);
  for (;;) {
    const reason = checkUrl(target, options);
    if (reason) throw new BlockedUrlError(reason);
    const response = await fetch(target, { ...init, redirect: "manual", signal });
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location && hops > 0) {
      hops--;
      target = new URL(location, target).toString();
      continue;
    }
    return response;
  }
}
