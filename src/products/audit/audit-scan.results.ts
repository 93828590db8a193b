// The MDN HTTP Observatory's tables as the audit scan uses them: every result name of the graded
// tests with its score modifier (the Observatory's SCORE_TABLE) and a plain-text description
// saying what it means and what to fix, the tests run, and the grade chart (A+ to F).

/** The Observatory's result names and modifiers (its SCORE_TABLE). */
export const MODIFIERS = {
  "csp-implemented-with-no-unsafe-default-src-none": 10,
  "csp-implemented-with-no-unsafe": 5,
  "csp-implemented-with-unsafe-inline-in-style-src-only": 0,
  "csp-implemented-with-insecure-scheme-in-passive-content-only": -10,
  "csp-implemented-with-unsafe-eval": -10,
  "csp-implemented-with-unsafe-inline": -20,
  "csp-implemented-with-insecure-scheme": -20,
  "csp-header-invalid": -25,
  "csp-not-implemented": -25,
  "csp-not-implemented-but-reporting-enabled": -25,
  "cookies-secure-with-httponly-sessions-and-samesite": 5,
  "cookies-secure-with-httponly-sessions": 0,
  "cookies-not-found": 0,
  "cookies-without-secure-flag-but-protected-by-hsts": -5,
  "cookies-session-without-secure-flag-but-protected-by-hsts": -10,
  "cookies-without-secure-flag": -20,
  "cookies-samesite-flag-invalid": -20,
  "cookies-anticsrf-without-samesite-flag": -20,
  "cookies-session-without-httponly-flag": -30,
  "cookies-session-without-secure-flag": -40,
  "cross-origin-resource-sharing-not-implemented": 0,
  "cross-origin-resource-sharing-implemented-with-public-access": 0,
  "cross-origin-resource-sharing-implemented-with-restricted-access": 0,
  "cross-origin-resource-sharing-implemented-with-universal-access": -50,
  "redirection-to-https": 0,
  "redirection-not-needed-no-http": 0,
  "redirection-off-host-from-http": -5,
  "redirection-not-to-https-on-initial-redirection": -10,
  "redirection-not-to-https": -20,
  "redirection-missing": -20,
  "referrer-policy-private": 5,
  "referrer-policy-not-implemented": 0,
  "referrer-policy-unsafe": -5,
  "referrer-policy-header-invalid": -5,
  "hsts-implemented-max-age-at-least-six-months": 0,
  "hsts-implemented-max-age-less-than-six-months": -10,
  "hsts-not-implemented": -20,
  "hsts-header-invalid": -20,
  "hsts-not-implemented-no-https": -20,
  "x-content-type-options-nosniff": 0,
  "x-content-type-options-not-implemented": -5,
  "x-content-type-options-header-invalid": -5,
  "x-frame-options-implemented-via-csp": 5,
  "x-frame-options-sameorigin-or-deny": 0,
  "x-frame-options-allow-from-origin": 0,
  "x-frame-options-not-implemented": -20,
  "x-frame-options-header-invalid": -20,
} as const;

export type ScanResultName = keyof typeof MODIFIERS;

/** The tests every scan runs, in the order they are listed. */
export const SCAN_TESTS = [
  "content-security-policy",
  "cookies",
  "cross-origin-resource-sharing",
  "redirection",
  "referrer-policy",
  "strict-transport-security",
  "x-content-type-options",
  "x-frame-options",
] as const;
export type ScanTestName = (typeof SCAN_TESTS)[number];

/** Each test's title (the Observatory's). */
export const TEST_TITLES: Record<ScanTestName, string> = {
  "content-security-policy": "Content Security Policy (CSP)",
  cookies: "Cookies",
  "cross-origin-resource-sharing": "Cross Origin Resource Sharing (CORS)",
  redirection: "Redirection",
  "referrer-policy": "Referrer Policy",
  "strict-transport-security": "Strict Transport Security (HSTS)",
  "x-content-type-options": "X-Content-Type-Options",
  "x-frame-options": "X-Frame-Options",
};

/** What each result means and, when it is not the best, what to fix (plain text). */
export const DESCRIPTIONS: Record<ScanResultName, string> = {
  "csp-implemented-with-no-unsafe-default-src-none": "Content Security Policy implemented with default-src 'none' and no 'unsafe' sources.",
  "csp-implemented-with-no-unsafe": "Content Security Policy implemented without 'unsafe-inline' or 'unsafe-eval'. For more, set default-src 'none'.",
  "csp-implemented-with-unsafe-inline-in-style-src-only":
    "Content Security Policy implemented with unsafe sources in style-src only. Lock style-src down: remove 'unsafe-inline', data: and broad sources.",
  "csp-implemented-with-insecure-scheme-in-passive-content-only":
    "The policy lets an https site load images or media over http. Load them over https and restrict img-src and media-src (or default-src).",
  "csp-implemented-with-unsafe-eval": "The policy allows 'unsafe-eval'. Remove the use of eval() from the code, then remove 'unsafe-eval' from the policy.",
  "csp-implemented-with-unsafe-inline":
    "The policy is unsafe: 'unsafe-inline' or data: in script-src, broad sources (https:, *) in script-src or object-src, or no script-src / object-src restriction at all. Remove them and set script-src and object-src.",
  "csp-implemented-with-insecure-scheme":
    "The policy lets an https site load active content over http. Load every resource over https and remove the http: sources.",
  "csp-header-invalid": "The Content-Security-Policy header cannot be parsed. Check its syntax (directives separated by ';', sources by spaces).",
  "csp-not-implemented":
    "No Content-Security-Policy header. Add one, starting from default-src 'self'; script-src 'self'; object-src 'none'; frame-ancestors 'none'.",
  "csp-not-implemented-but-reporting-enabled":
    "Only Content-Security-Policy-Report-Only is set: nothing is enforced. Send the policy as Content-Security-Policy once its reports are clean.",
  "cookies-secure-with-httponly-sessions-and-samesite": "Every cookie is Secure, session cookies are HttpOnly, and SameSite is set.",
  "cookies-secure-with-httponly-sessions": "Every cookie is Secure and session cookies are HttpOnly. Add SameSite=Lax or Strict to every cookie.",
  "cookies-not-found": "No cookies set.",
  "cookies-without-secure-flag-but-protected-by-hsts": "Cookies are set without Secure (HSTS keeps them off http). Add Secure to every cookie.",
  "cookies-session-without-secure-flag-but-protected-by-hsts": "A session cookie is set without Secure (HSTS keeps it off http). Add Secure to it.",
  "cookies-without-secure-flag": "Cookies are set without Secure, or over http. Add Secure to every cookie and set up HSTS.",
  "cookies-samesite-flag-invalid": "A cookie's SameSite is not Strict, Lax or None, or is None without Secure. Use SameSite=Lax or Strict.",
  "cookies-anticsrf-without-samesite-flag": "An anti-CSRF cookie is set without SameSite. Add SameSite=Strict or Lax to it.",
  "cookies-session-without-httponly-flag": "A session cookie is set without HttpOnly: scripts can read it. Add HttpOnly to it.",
  "cookies-session-without-secure-flag": "A session cookie is set without Secure, or over http. Add Secure to it and set up HSTS.",
  "cross-origin-resource-sharing-not-implemented": "Content is not visible to other origins through CORS headers.",
  "cross-origin-resource-sharing-implemented-with-public-access":
    "Public content is visible to any origin (Access-Control-Allow-Origin: *) without credentials.",
  "cross-origin-resource-sharing-implemented-with-restricted-access": "Content is visible through CORS to specific origins only.",
  "cross-origin-resource-sharing-implemented-with-universal-access":
    "Any origin can read this content with credentials (Access-Control-Allow-Origin is * or echoes the caller's origin, with Access-Control-Allow-Credentials: true). Allow credentials only for named origins, or send * without Access-Control-Allow-Credentials.",
  "redirection-to-https": "http:// redirects to https:// on the same host first.",
  "redirection-not-needed-no-http": "The host does not answer plain http, so no redirection is needed.",
  "redirection-off-host-from-http": "http:// redirects to https:// on another host, so HSTS cannot be set. Redirect to https:// on the same host first.",
  "redirection-not-to-https-on-initial-redirection": "http:// first redirects to another http:// address. Redirect to https:// on the same host first.",
  "redirection-not-to-https": "The redirects end on an http:// address. Redirect to https:// on the same host first.",
  "redirection-missing": "http:// does not redirect to https://. Answer plain http with a redirect to the same host on https.",
  "referrer-policy-private": "Referrer-Policy is no-referrer, same-origin, strict-origin or strict-origin-when-cross-origin.",
  "referrer-policy-not-implemented": "No Referrer-Policy header (browsers default to strict-origin-when-cross-origin). Set it explicitly for the bonus.",
  "referrer-policy-unsafe":
    "Referrer-Policy is origin, origin-when-cross-origin, unsafe-url or no-referrer-when-downgrade, which leaks addresses. Set strict-origin-when-cross-origin at least.",
  "referrer-policy-header-invalid": "The Referrer-Policy header holds no known policy. Set strict-origin-when-cross-origin at least.",
  "hsts-implemented-max-age-at-least-six-months": "Strict-Transport-Security is set with a max-age of at least six months (15552000).",
  "hsts-implemented-max-age-less-than-six-months": "Strict-Transport-Security's max-age is under six months. Raise it to at least 15552000 (a year: 31536000).",
  "hsts-not-implemented": "No Strict-Transport-Security header. Add Strict-Transport-Security: max-age=31536000 (at least 15552000).",
  "hsts-header-invalid": "The Strict-Transport-Security header cannot be read (no max-age, or set twice). Send it once with max-age=31536000.",
  "hsts-not-implemented-no-https": "The answer came over plain http, where HSTS cannot be set. Serve the site over https.",
  "x-content-type-options-nosniff": "X-Content-Type-Options is nosniff.",
  "x-content-type-options-not-implemented": "No X-Content-Type-Options header. Add X-Content-Type-Options: nosniff.",
  "x-content-type-options-header-invalid": "X-Content-Type-Options is not nosniff. Set it to nosniff.",
  "x-frame-options-implemented-via-csp": "Framing is restricted by the CSP frame-ancestors directive.",
  "x-frame-options-sameorigin-or-deny": "X-Frame-Options is DENY or SAMEORIGIN. For the bonus, add frame-ancestors to the CSP.",
  "x-frame-options-allow-from-origin": "X-Frame-Options uses ALLOW-FROM, which browsers ignore. Use the CSP frame-ancestors directive.",
  "x-frame-options-not-implemented":
    "Any site can frame this page (clickjacking). Add the CSP directive frame-ancestors 'none' (or 'self'), or X-Frame-Options: DENY.",
  "x-frame-options-header-invalid": "X-Frame-Options cannot be read. Use the CSP directive frame-ancestors 'none' (or 'self'), or X-Frame-Options: DENY.",
};

/** The Observatory's grade chart: the grade of each score rounded down to a multiple of 5. */
export const GRADE_CHART: ReadonlyArray<readonly [number, string]> = [
  [100, "A+"],
  [90, "A"],
  [85, "A-"],
  [80, "B+"],
  [70, "B"],
  [65, "B-"],
  [60, "C+"],
  [50, "C"],
  [45, "C-"],
  [40, "D+"],
  [30, "D"],
  [25, "D-"],
  [0, "F"],
];

/** Grades best first, for "did the grade drop". */
export const GRADES = GRADE_CHART.map(([, grade]) => grade);

/** Bonuses count only when the score without them is at least this (an A). */
export const MINIMUM_SCORE_FOR_EXTRA_CREDIT = 90;

/** The grade of a score (negative counts as 0, anything over 100 as 100). */
export function gradeOf(score: number): string {
  const floored = Math.min(Math.max(score, 0), 100);
  const step = floored - (floored % 5);
  return GRADE_CHART.find(([min]) => step >= min)![1];
}

/** True when `next` is a lower grade than `previous`. */
export function gradeDropped(previous: string | null, next: string): boolean {
  if (!previous) return false;
  const before = GRADES.indexOf(previous);
  const after = GRADES.indexOf(next);
  return before >= 0 && after > before;
}
