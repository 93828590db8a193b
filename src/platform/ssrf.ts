// The one SSRF guard for outbound calls to user-supplied URLs (webhook destinations, chat
// webhooks, alert webhooks, push endpoints, redirect URLs). Workers cannot resolve DNS before a
// fetch, so the guard judges the URL itself: scheme, literal IP ranges, and names that point
// inside a network. Redirects are never followed blindly: each hop is judged again.

export interface SsrfOptions {
  /** ALLOW_PRIVATE_TARGETS: when true, http and loopback/private targets are allowed (dev, tests). */
  allowPrivate: boolean;
}

/** Reads the ALLOW_PRIVATE_TARGETS var. */
export function ssrfOptions(env: { ALLOW_PRIVATE_TARGETS?: string }): SsrfOptions {
  return { allowPrivate: env.ALLOW_PRIVATE_TARGETS === "true" };
}

const BLOCKED_NAMES = [/^localhost$/i, /\.localhost$/i, /\.local$/i, /\.internal$/i, /\.home\.arpa$/i, /^metadata(\.|$)/i];

function ipv4Parts(host: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

function privateIpv4([a, b]: number[]): boolean {
  return (
    a === 0 || a === 10 || a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) ||
    (a === 198 && (b === 18 || b === 19)) ||
    a >= 224 // multicast and reserved
  );
}

function privateIpv6(host: string): boolean {
  const h = host.toLowerCase();
  if (h === "::" || h === "::1") return true;
  if (h.startsWith("fe8") || h.startsWith("fe9") || h.startsWith("fea") || h.startsWith("feb")) return true; // link-local
  if (h.startsWith("fc") || h.startsWith("fd")) return true; // unique local
  if (h.startsWith("ff")) return true; // multicast
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (mapped) {
    const parts = ipv4Parts(mapped[1]);
    return parts ? privateIpv4(parts) : true;
  }
  return h.startsWith("::ffff:"); // hex-form mapped addresses: refuse rather than parse
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
  if (options.allowPrivate) {
    return url.protocol === "https:" || url.protocol === "http:" ? null : "must use https";
  }
  if (url.protocol !== "https:") return "must use https";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!host) return "must have a host";
  if (BLOCKED_NAMES.some((re) => re.test(host))) return "must not point to a private or internal address";
  if (!host.includes(".") && !host.includes(":")) return "must not point to a private or internal address";
  const v4 = ipv4Parts(host);
  if (v4 && privateIpv4(v4)) return "must not point to a private or internal address";
  // Decimal, octal or hex encodings of IPv4 addresses are refused outright.
  if (/^(0x[0-9a-f]+|\d+)$/i.test(host) || /^[0-9.]+$/.test(host) && !v4) return "must not point to a private or internal address";
  if (host.includes(":") && privateIpv6(host)) return "must not point to a private or internal address";
  return null;
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
