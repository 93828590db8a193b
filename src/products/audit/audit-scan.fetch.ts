// The fetch of a scan: what a target answers, read within fixed limits and through the SSRF guard,
// for the grader (audit-scan.grade.ts). Every hop (the target and each redirect) is judged by the
// platform's guard (platform/ssrf.ts checkUrl: scheme, literal addresses, internal names), refused
// when its host is APP_URL's, and its name resolved over DNS-over-HTTPS (DNS_RESOLVER_URL, as mail
// domain verification asks it) and refused when any A or AAAA answer is a private, loopback,
// link-local, metadata or other special address (checkAddress). One deadline covers it all (10 s),
// at most 5 redirects are followed (a repeated address is a loop), and at most 1 MB of the graded
// answer is read, never the whole body. For an https target, one http:// request to the same host
// tells the redirection test what plain http does; its body is never read.
//
// The DNS-rebinding window that remains: the runtime's fetch() resolves the name again itself, so
// a name whose records change between our look-up and that connection (a TTL of 0 and an attacker's
// resolver) could still reach an address the look-up did not see. Workers cannot pin a connection
// to a resolved address. What bounds it: loopback and private ranges are not routable from
// Cloudflare's edge in production, and the scan returns only headers and grades, never a body.
import type { Env } from "../../env";
import { settings } from "../../platform/config";
import { log } from "../../platform/log";
import { discardBody, readCapped } from "../../platform/outbound";
import { checkAddress, checkUrl, ssrfOptions, type SsrfOptions } from "../../platform/ssrf";
import type { ScanObservation } from "./audit-scan.grade";

/** The limits of one scan's fetch. */
export const SCAN_LIMITS = {
  /** Everything (DNS look-ups, every hop, the body read, the http:// request) within this. */
  timeoutMs: 10_000,
  maxRedirects: 5,
  /** The most bytes of the graded answer's body read. */
  readBytes: 1024 * 1024,
  /** The http:// request of the redirection test gives up sooner, inside the same deadline. */
  httpProbeMs: 5_000,
};
export type ScanLimits = typeof SCAN_LIMITS;

/** The Origin the scan sends, so an answer that echoes any origin with credentials shows itself. */
export const SCAN_ORIGIN = "https://scanner.edge-platform.invalid";
const USER_AGENT = "edge-platform-audit-scan/1 (+security headers check)";

/** Why a scan ended `failed`: the message is the scan's `error`. */
export class ScanFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScanFailure";
  }
}

/** What the fetch saw, plus the graded answer's HTTP status. */
export type ScanFetchResult = ScanObservation & { statusCode: number };

/** The host of APP_URL: a scan of the platform itself is refused (it would scan its own API). */
export function appHost(env: Env): string {
  return new URL(settings(env).appUrl).hostname.toLowerCase();
}

/** Why a target URL may not be scanned, or null: the guard's reasons, and APP_URL's host. */
export function targetProblem(env: Env, url: string): string | null {
  const reason = checkUrl(url, ssrfOptions(env));
  if (reason) return reason;
  const host = new URL(url).hostname.replace(/\.+$/, "").toLowerCase();
  if (host === appHost(env)) return "must not be this platform's own address";
  return null;
}

interface DohAnswer {
  Status?: number;
  Answer?: Array<{ type?: number; data?: string }>;
}

/** The A and AAAA addresses of a name, over DNS-over-HTTPS; a ScanFailure when it cannot be resolved. */
async function resolveAddresses(env: Env, host: string, signal: AbortSignal): Promise<string[]> {
  const ask = async (type: "A" | "AAAA") => {
    const url = new URL(settings(env).dnsResolverUrl);
    url.searchParams.set("name", host);
    url.searchParams.set("type", type);
    const response = await fetch(url, { headers: { accept: "application/dns-json" }, redirect: "manual", signal });
    if (!response.ok) {
      await discardBody(response);
      throw new Error(`resolver answered HTTP ${response.status}`);
    }
    const answer = JSON.parse(await readCapped(response)) as DohAnswer;
    return {
      status: answer.Status ?? 0,
      addresses: (answer.Answer ?? []).filter((r) => (r.type === 1 || r.type === 28) && typeof r.data === "string").map((r) => r.data!.trim()),
    };
  };
  let answers: Array<{ status: number; addresses: string[] }>;
  try {
    answers = await Promise.all([ask("A"), ask("AAAA")]);
  } catch (error) {
    if (signal.aborted) throw new ScanFailure(`timeout: no answer within the scan's time limit (resolving ${host})`);
    log.error("audit scan: DNS-over-HTTPS look-up failed", { host, error: String(error) });
    throw new ScanFailure(`DNS failure: the resolver could not be asked about ${host}`);
  }
  const addresses = answers.flatMap((a) => a.addresses);
  if (addresses.length === 0) throw new ScanFailure(`DNS failure: ${host} does not resolve`);
  return addresses;
}

/** Refuses a hop (ScanFailure) unless the guard, the APP_URL rule and the DNS answers allow it. */
async function guardHop(env: Env, url: string, options: SsrfOptions, signal: AbortSignal, checked: Map<string, Promise<void>>): Promise<void> {
  const problem = targetProblem(env, url);
  if (problem) throw new ScanFailure(`forbidden hop: ${url.slice(0, 300)} ${problem}`);
  const host = new URL(url).hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "")
    .toLowerCase();
  // A literal address was judged by the guard; loopback names only pass it where private targets are allowed.
  if (checkAddress(host, options) === null || /(^|\.)localhost$/.test(host)) return;
  let verdict = checked.get(host);
  if (!verdict) {
    verdict = resolveAddresses(env, host, signal).then((addresses) => {
      const inside = addresses.find((address) => checkAddress(address, options) !== null);
      if (inside) throw new ScanFailure(`forbidden hop: ${host} resolves to ${inside}, a private or internal address`);
    });
    checked.set(host, verdict);
  }
  await verdict;
}

const isRedirect = (response: Response) => response.status >= 300 && response.status < 400 && response.headers.has("location");

function headersOf(response: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name.toLowerCase() !== "set-cookie") headers[name.toLowerCase()] = value.slice(0, 8192);
  });
  return headers;
}

/**
 * Fetches a target within the limits and returns what the grader needs. Throws ScanFailure for a
 * timeout, a DNS failure, a forbidden hop, a connection that gave no HTTP answer, or a redirect
 * loop (a repeated address, or more than `maxRedirects`); any HTTP answer is a result.
 */
export async function fetchTarget(env: Env, targetUrl: string, limits: ScanLimits = SCAN_LIMITS): Promise<ScanFetchResult> {
  const options = ssrfOptions(env);
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const checked = new Map<string, Promise<void>>();
  const timeout = () => new ScanFailure(`timeout: no answer within ${limits.timeoutMs / 1000} s`);
  const setCookies: string[] = [];
  const seen = new Set<string>();
  let url = targetUrl;
  let http: ScanObservation["http"] = null;
  for (let redirects = 0; ; redirects++) {
    await guardHop(env, url, options, deadline, checked);
    if (seen.has(url)) throw new ScanFailure(`redirect loop: ${url.slice(0, 300)} was reached twice`);
    seen.add(url);
    let response: Response;
    try {
      response = await fetch(url, {
        method: "GET",
        redirect: "manual",
        signal: deadline,
        headers: { origin: SCAN_ORIGIN, accept: "text/html,application/xhtml+xml,*/*;q=0.8", "user-agent": USER_AGENT },
      });
    } catch (error) {
      if (deadline.aborted) throw timeout();
      throw new ScanFailure(`connection failed: ${String(error).slice(0, 200)}`);
    }
    setCookies.push(...response.headers.getSetCookie().slice(0, 50));
    const location = response.headers.get("location");
    if (redirects === 0 && new URL(url).protocol === "http:") http = { status: response.status, location };
    if (isRedirect(response)) {
      await discardBody(response);
      if (redirects >= limits.maxRedirects) throw new ScanFailure(`redirect loop: more than ${limits.maxRedirects} redirects`);
      try {
        url = new URL(location!, url).toString();
      } catch {
        throw new ScanFailure("forbidden hop: a redirect's Location is not a URL");
      }
      continue;
    }
    // Read at most the limit (the grade needs the headers; the read bounds what a target can make us hold).
    await readCapped(response, limits.readBytes);
    if (deadline.aborted) throw timeout();
    const target = new URL(targetUrl);
    if (target.protocol === "https:") http = await probeHttp(target, deadline, limits);
    return { targetUrl, finalUrl: url, headers: headersOf(response), setCookies, requestOrigin: SCAN_ORIGIN, http, statusCode: response.status };
  }
}

/**
 * The redirection test's one http:// request to the target's host (default port, the target's
 * path), redirects not followed and its body never read. The host was judged by the first hop
 * (same name, same DNS answers); null when plain http gives no answer in time.
 */
async function probeHttp(target: URL, deadline: AbortSignal, limits: ScanLimits): Promise<ScanObservation["http"]> {
  const url = `http://${target.hostname.includes(":") ? `[${target.hostname.replace(/^\[|\]$/g, "")}]` : target.hostname}${target.pathname}${target.search}`;
  try {
    const response = await fetch(url, {
      method: "GET",
      redirect: "manual",
      signal: AbortSignal.any([deadline, AbortSignal.timeout(limits.httpProbeMs)]),
      headers: { "user-agent": USER_AGENT },
    });
    await discardBody(response);
    return { status: response.status, location: response.headers.get("location") };
  } catch {
    return null;
  }
}
