// Grading of a scan, as the MDN HTTP Observatory grades a site (its test names, its results and
// their score modifiers, its score from 100 with bonuses only for a site already at 90, its grade
// chart): pure functions of what the fetch saw (audit-scan.fetch.ts), so each rule is tested
// with chosen headers. Graded: content-security-policy, cookies, cross-origin-resource-sharing,
// redirection, referrer-policy, strict-transport-security, x-content-type-options and
// x-frame-options. Not graded: subresource-integrity (needs the page's HTML parsed) and TLS
// (Workers expose no TLS details: no certificate chain, no cipher, so the Observatory's
// "invalid certificate" results never occur here). Cookie values are never kept: only names and flags.
import type { ScanTestResult } from "../../db/schema/audit";
import { DESCRIPTIONS, gradeOf, MINIMUM_SCORE_FOR_EXTRA_CREDIT, MODIFIERS, SCAN_TESTS, type ScanResultName, type ScanTestName } from "./audit-scan.results";

/** What the fetch saw of a target. */
export interface ScanObservation {
  /** The URL scanned (https, or http where private targets are allowed). */
  targetUrl: string;
  /** The URL of the graded answer, after redirects. */
  finalUrl: string;
  /** The graded answer's headers, names lower-cased (repeated headers joined with ", "). */
  headers: Record<string, string>;
  /** Every Set-Cookie line of every hop (read here for names and flags only). */
  setCookies: string[];
  /** The Origin header the scan sent (a reflected one with credentials is universal access). */
  requestOrigin: string;
  /**
   * The first http:// answer of the target's host: its status and Location, or null when plain
   * http did not answer (refused, timed out). For an http target it is the target's own first hop.
   */
  http: { status: number; location: string | null } | null;
}

function test(name: ScanTestName, result: ScanResultName, pass: boolean, data?: unknown): ScanTestResult {
  return { name, pass, result, score_modifier: MODIFIERS[result], description: DESCRIPTIONS[result], ...(data === undefined ? {} : { data }) };
}

/** A header value as kept in a test's data: cut to 256 characters. */
const kept = (value: string | undefined) => (value === undefined ? null : value.slice(0, 256));

// ---- content-security-policy ----------------------------------------------------------------

const BROAD = new Set(["ftp:", "http:", "https:", "*", "http://*", "http://*.*", "https://*", "https://*.*"]);
const UNSAFE_INLINE = new Set(["'unsafe-inline'", "data:"]);
const NONCE_OR_HASH = /^'(nonce-|sha256-|sha384-|sha512-)/;

/**
 * A CSP header as directives → sources. Several policies (comma-separated or repeated headers):
 * a directive is taken from the first policy that names it, and within a policy its first
 * occurrence counts, as browsers do. Throws on a directive name that is not one.
 */
export function parseCsp(header: string): Map<string, Set<string>> {
  const directives = new Map<string, Set<string>>();
  for (const policy of header.slice(0, 16_384).split(",")) {
    for (const part of policy.split(";")) {
      const tokens = part.trim().split(/\s+/).filter(Boolean);
      if (tokens.length === 0) continue;
      const name = tokens[0].toLowerCase();
      if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new Error(`invalid directive ${name}`);
      if (!directives.has(name)) directives.set(name, new Set(tokens.slice(1).map((t) => (NONCE_OR_HASH.test(t) ? t : t.toLowerCase()))));
    }
  }
  if (directives.size === 0) throw new Error("no directive");
  return directives;
}

export function cspTest(o: ScanObservation): ScanTestResult {
  const header = o.headers["content-security-policy"];
  if (header === undefined) {
    return o.headers["content-security-policy-report-only"] !== undefined
      ? test("content-security-policy", "csp-not-implemented-but-reporting-enabled", false)
      : test("content-security-policy", "csp-not-implemented", false);
  }
  let csp: Map<string, Set<string>>;
  try {
    csp = parseCsp(header);
  } catch {
    return test("content-security-policy", "csp-header-invalid", false, { header: kept(header) });
  }
  const https = new URL(o.finalUrl).protocol === "https:";
  const fallback = (name: string) => new Set(csp.get(name) ?? csp.get("default-src") ?? ["*"]);
  const scriptSrc = fallback("script-src");
  const styleSrc = fallback("style-src");
  const objectSrc = fallback("object-src");
  // A nonce or hash makes browsers ignore 'unsafe-inline'; 'strict-dynamic' with one ignores hosts and 'self' too.
  for (const list of [scriptSrc, styleSrc]) if ([...list].some((s) => NONCE_OR_HASH.test(s))) list.delete("'unsafe-inline'");
  let result: ScanResultName | null = null;
  if (scriptSrc.has("'strict-dynamic'")) {
    if ([...scriptSrc].some((s) => NONCE_OR_HASH.test(s))) {
      for (const s of [...scriptSrc]) if ([...BROAD].some((b) => s.startsWith(b)) || s === "'self'") scriptSrc.delete(s);
    } else result = "csp-header-invalid";
  }
  const passive = ["img-src", "media-src"].flatMap((d) => [...(csp.get(d) ?? csp.get("default-src") ?? [])]);
  const active = [...csp.entries()].filter(([d]) => d !== "img-src" && d !== "media-src" && d !== "script-src").flatMap(([, s]) => [...s]);
  active.push(...scriptSrc);
  const insecure = (s: string) => s.startsWith("http:") || s.startsWith("ftp:");
  const order: Array<[boolean, ScanResultName]> = [
    [[...scriptSrc].some((s) => BROAD.has(s) || UNSAFE_INLINE.has(s)) || [...objectSrc].some((s) => BROAD.has(s)), "csp-implemented-with-unsafe-inline"],
    [https && active.some(insecure), "csp-implemented-with-insecure-scheme"],
    [scriptSrc.has("'unsafe-eval'") || styleSrc.has("'unsafe-eval'"), "csp-implemented-with-unsafe-eval"],
    [https && passive.some(insecure), "csp-implemented-with-insecure-scheme-in-passive-content-only"],
    [[...styleSrc].some((s) => BROAD.has(s) || UNSAFE_INLINE.has(s)), "csp-implemented-with-unsafe-inline-in-style-src-only"],
  ];
  result ??= order.find(([hit]) => hit)?.[1] ?? null;
  const defaultSrc = csp.get("default-src");
  result ??= defaultSrc?.has("'none'") && defaultSrc.size === 1 ? "csp-implemented-with-no-unsafe-default-src-none" : "csp-implemented-with-no-unsafe";
  const pass = (
    [
      "csp-implemented-with-no-unsafe",
      "csp-implemented-with-no-unsafe-default-src-none",
      "csp-implemented-with-unsafe-inline-in-style-src-only",
      "csp-implemented-with-insecure-scheme-in-passive-content-only",
    ] as ScanResultName[]
  ).includes(result);
  return test("content-security-policy", result, pass, { header: kept(header), frame_ancestors: csp.has("frame-ancestors") });
}

// ---- cookies --------------------------------------------------------------------------------

export interface CookieFlags {
  name: string;
  secure: boolean;
  http_only: boolean;
  same_site: string | null;
}

/** A Set-Cookie line's name and flags; its value is dropped here and never kept. */
export function cookieFlags(line: string): CookieFlags & { sameSiteInvalid: boolean } {
  const [pair, ...attributes] = line.split(";");
  const name = pair.split("=")[0].trim().slice(0, 128);
  let secure = false;
  let httpOnly = false;
  let sameSite: string | null = null;
  let sameSiteInvalid = false;
  for (const attribute of attributes) {
    const [key, ...rest] = attribute.split("=");
    const k = key.trim().toLowerCase();
    const v = rest.join("=").trim();
    if (k === "secure") secure = true;
    else if (k === "httponly") httpOnly = true;
    else if (k === "samesite") {
      sameSite = v.slice(0, 16) || null;
      if (!["lax", "strict", "none"].includes(v.toLowerCase())) sameSiteInvalid = true;
    }
  }
  return { name, secure, http_only: httpOnly, same_site: sameSite, sameSiteInvalid };
}

/** Worse results come later: a cookie moves the test's result only to a worse one. */
const COOKIE_BADNESS: ScanResultName[] = [
  "cookies-without-secure-flag-but-protected-by-hsts",
  "cookies-without-secure-flag",
  "cookies-session-without-secure-flag-but-protected-by-hsts",
  "cookies-samesite-flag-invalid",
  "cookies-anticsrf-without-samesite-flag",
  "cookies-session-without-httponly-flag",
  "cookies-session-without-secure-flag",
];

export function cookiesTest(o: ScanObservation, hstsPass: boolean): ScanTestResult {
  const cookies = o.setCookies.slice(0, 100).map(cookieFlags);
  if (cookies.length === 0) return test("cookies", "cookies-not-found", true);
  let result: ScanResultName | null = null;
  const worse = (next: ScanResultName) => {
    if (result === null || COOKIE_BADNESS.indexOf(next) > COOKIE_BADNESS.indexOf(result)) result = next;
  };
  let missingSameSite = false;
  for (const cookie of cookies) {
    const lower = cookie.name.toLowerCase();
    const session = lower.includes("login") || lower.includes("sess");
    if (cookie.sameSiteInvalid || (!cookie.secure && cookie.same_site?.toLowerCase() === "none")) worse("cookies-samesite-flag-invalid");
    if (!cookie.secure) worse(hstsPass ? "cookies-without-secure-flag-but-protected-by-hsts" : "cookies-without-secure-flag");
    if (lower.includes("csrf") && !cookie.same_site) worse("cookies-anticsrf-without-samesite-flag");
    if (session && !cookie.secure) worse(hstsPass ? "cookies-session-without-secure-flag-but-protected-by-hsts" : "cookies-session-without-secure-flag");
    if (session && !cookie.http_only) worse("cookies-session-without-httponly-flag");
    if (!cookie.same_site) missingSameSite = true;
  }
  const final: ScanResultName = result ?? (missingSameSite ? "cookies-secure-with-httponly-sessions" : "cookies-secure-with-httponly-sessions-and-samesite");
  const pass = final === "cookies-secure-with-httponly-sessions" || final === "cookies-secure-with-httponly-sessions-and-samesite";
  return test(
    "cookies",
    final,
    pass,
    cookies.map(({ sameSiteInvalid: _, ...flags }) => flags),
  );
}

// ---- the header tests -----------------------------------------------------------------------

/**
 * CORS, as the contract states it: `*` with credentials, or the scan's own Origin echoed with
 * credentials, is universal access (the Observatory counts the echo; a browser refuses a bare `*`
 * with credentials, but a server that sends both shows the intent, so both fail here).
 */
export function corsTest(o: ScanObservation): ScanTestResult {
  const origin = o.headers["access-control-allow-origin"];
  if (origin === undefined) return test("cross-origin-resource-sharing", "cross-origin-resource-sharing-not-implemented", true);
  const value = origin.slice(0, 256).trim();
  const credentials = (o.headers["access-control-allow-credentials"] ?? "").trim().toLowerCase() === "true";
  const data = { allow_origin: value, allow_credentials: credentials };
  if (credentials && (value === "*" || value === o.requestOrigin)) {
    return test("cross-origin-resource-sharing", "cross-origin-resource-sharing-implemented-with-universal-access", false, data);
  }
  if (value === "*") return test("cross-origin-resource-sharing", "cross-origin-resource-sharing-implemented-with-public-access", true, data);
  return test("cross-origin-resource-sharing", "cross-origin-resource-sharing-implemented-with-restricted-access", true, data);
}

/**
 * Redirection from plain http, from the one http:// answer the scan reads (its body unread): a
 * redirect to https on the same host passes; to https elsewhere, to http, or none fails. The
 * Observatory follows the whole http route; with one request, a first redirect to http:// is
 * graded as the initial-redirection result (it cannot know where the route ends).
 */
export function redirectionTest(o: ScanObservation): ScanTestResult {
  if (!o.http) return test("redirection", "redirection-not-needed-no-http", true);
  const data = { status: o.http.status, location: o.http.location?.slice(0, 512) ?? null };
  const redirects = o.http.status >= 300 && o.http.status < 400 && o.http.location;
  if (!redirects) return test("redirection", "redirection-missing", false, data);
  let next: URL;
  try {
    next = new URL(o.http.location!, `http://${new URL(o.targetUrl).host}/`);
  } catch {
    return test("redirection", "redirection-missing", false, data);
  }
  if (next.protocol === "http:") return test("redirection", "redirection-not-to-https-on-initial-redirection", false, data);
  if (next.protocol !== "https:") return test("redirection", "redirection-not-to-https", false, data);
  if (next.hostname !== new URL(o.targetUrl).hostname) return test("redirection", "redirection-off-host-from-http", false, data);
  return test("redirection", "redirection-to-https", true, data);
}

const GOOD_REFERRERS = ["no-referrer", "same-origin", "strict-origin", "strict-origin-when-cross-origin"];
const BAD_REFERRERS = ["origin", "origin-when-cross-origin", "unsafe-url", "no-referrer-when-downgrade"];

export function referrerPolicyTest(o: ScanObservation): ScanTestResult {
  const header = o.headers["referrer-policy"];
  if (header === undefined) return test("referrer-policy", "referrer-policy-not-implemented", true);
  // The last policy browsers know wins.
  const policy = header
    .split(",")
    .map((p) => p.trim().toLowerCase())
    .filter((p) => GOOD_REFERRERS.includes(p) || BAD_REFERRERS.includes(p))
    .pop();
  const data = { header: kept(header) };
  if (policy && GOOD_REFERRERS.includes(policy)) return test("referrer-policy", "referrer-policy-private", true, data);
  if (policy) return test("referrer-policy", "referrer-policy-unsafe", false, data);
  return test("referrer-policy", "referrer-policy-header-invalid", false, data);
}

/** Six months as the Observatory counts them (15768000 is exact; 15552000 is what sites send). */
export const HSTS_MIN_MAX_AGE = 15_552_000;

export function hstsTest(o: ScanObservation): ScanTestResult {
  if (new URL(o.finalUrl).protocol !== "https:") return test("strict-transport-security", "hsts-not-implemented-no-https", false);
  const header = o.headers["strict-transport-security"];
  if (header === undefined) return test("strict-transport-security", "hsts-not-implemented", false);
  const data = { header: kept(header) };
  if (header.includes(",")) return test("strict-transport-security", "hsts-header-invalid", false, data);
  const maxAge = header
    .split(";")
    .map((p) => p.trim().toLowerCase())
    .find((p) => p.startsWith("max-age="));
  const seconds = maxAge ? Number.parseInt(maxAge.slice(8, 128).replace(/^"|"$/g, ""), 10) : Number.NaN;
  if (!Number.isFinite(seconds)) return test("strict-transport-security", "hsts-header-invalid", false, data);
  if (seconds < HSTS_MIN_MAX_AGE)
    return test("strict-transport-security", "hsts-implemented-max-age-less-than-six-months", false, { ...data, max_age: seconds });
  return test("strict-transport-security", "hsts-implemented-max-age-at-least-six-months", true, { ...data, max_age: seconds });
}

export function contentTypeOptionsTest(o: ScanObservation): ScanTestResult {
  const header = o.headers["x-content-type-options"];
  if (header === undefined) return test("x-content-type-options", "x-content-type-options-not-implemented", false);
  if (header.trim().toLowerCase() === "nosniff") return test("x-content-type-options", "x-content-type-options-nosniff", true, { header: kept(header) });
  return test("x-content-type-options", "x-content-type-options-header-invalid", false, { header: kept(header) });
}

/** Framing: X-Frame-Options, or the CSP's frame-ancestors, which supersedes it. */
export function framingTest(o: ScanObservation): ScanTestResult {
  const csp = o.headers["content-security-policy"];
  let frameAncestors = false;
  try {
    frameAncestors = csp !== undefined && parseCsp(csp).has("frame-ancestors");
  } catch {
    frameAncestors = false;
  }
  const header = o.headers["x-frame-options"];
  const data = { header: kept(header), frame_ancestors: frameAncestors };
  if (frameAncestors) return test("x-frame-options", "x-frame-options-implemented-via-csp", true, data);
  if (header === undefined) return test("x-frame-options", "x-frame-options-not-implemented", false, data);
  const value = header.trim().toLowerCase();
  if (value === "deny" || value === "sameorigin") return test("x-frame-options", "x-frame-options-sameorigin-or-deny", true, data);
  if (value.startsWith("allow-from")) return test("x-frame-options", "x-frame-options-allow-from-origin", true, data);
  return test("x-frame-options", "x-frame-options-header-invalid", false, data);
}

/** Every test of an observation, the score (100 plus modifiers, bonuses only from an A) and the grade. */
export function gradeScan(o: ScanObservation): { score: number; grade: string; tests: ScanTestResult[] } {
  const hsts = hstsTest(o);
  const byName: Record<ScanTestName, ScanTestResult> = {
    "content-security-policy": cspTest(o),
    cookies: cookiesTest(o, hsts.pass),
    "cross-origin-resource-sharing": corsTest(o),
    redirection: redirectionTest(o),
    "referrer-policy": referrerPolicyTest(o),
    "strict-transport-security": hsts,
    "x-content-type-options": contentTypeOptionsTest(o),
    "x-frame-options": framingTest(o),
  };
  const tests = SCAN_TESTS.map((name) => byName[name]);
  const penalties = tests.reduce((sum, t) => sum + Math.min(0, t.score_modifier), 0);
  const all = tests.reduce((sum, t) => sum + t.score_modifier, 0);
  const uncurved = 100 + penalties;
  const score = Math.max(0, uncurved >= MINIMUM_SCORE_FOR_EXTRA_CREDIT ? 100 + all : uncurved);
  return { score, grade: gradeOf(score), tests };
}
