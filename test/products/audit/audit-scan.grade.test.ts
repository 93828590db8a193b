// The scan's grading as the MDN HTTP Observatory grades (pure functions, chosen header sets).
import { describe, expect, it } from "vitest";
import {
  cookiesTest,
  corsTest,
  cspTest,
  framingTest,
  gradeScan,
  hstsTest,
  redirectionTest,
  referrerPolicyTest,
  type ScanObservation,
} from "../../../src/products/audit/audit-scan.grade";
import { gradeDropped, gradeOf, MODIFIERS, SCAN_TESTS } from "../../../src/products/audit/audit-scan.results";

const ORIGIN = "https://scanner.example";

function seen(headers: Record<string, string>, extra: Partial<ScanObservation> = {}): ScanObservation {
  return {
    targetUrl: "https://site.example/",
    finalUrl: "https://site.example/",
    headers,
    setCookies: [],
    requestOrigin: ORIGIN,
    http: { status: 301, location: "https://site.example/" },
    ...extra,
  };
}

/** A site doing everything right. */
const GOOD = {
  "content-security-policy": "default-src 'none'; script-src 'self'; frame-ancestors 'none'; form-action 'self'",
  "strict-transport-security": "max-age=31536000; includeSubDomains",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "strict-origin-when-cross-origin",
};

describe("score and grade", () => {
  it("the grade chart: multiples of 5 rounded down, A+ from 100, F under 25", () => {
    expect([135, 100, 99, 90, 89, 85, 80, 79, 70, 65, 60, 55, 50, 45, 40, 35, 30, 25, 24, 0, -10].map(gradeOf)).toEqual([
      "A+",
      "A+",
      "A",
      "A",
      "A-",
      "A-",
      "B+",
      "B",
      "B",
      "B-",
      "C+",
      "C",
      "C",
      "C-",
      "D+",
      "D",
      "D",
      "D-",
      "F",
      "F",
      "F",
    ]);
    expect(gradeDropped("A", "B")).toBe(true);
    expect(gradeDropped("B", "A+")).toBe(false);
    expect(gradeDropped(null, "F")).toBe(false);
  });

  it("a well-configured site: every test passes, bonuses count (score above 100), A+", () => {
    const graded = gradeScan(seen(GOOD));
    expect(graded.tests.map((t) => t.name)).toEqual([...SCAN_TESTS]);
    expect(graded.tests.every((t) => t.pass)).toBe(true);
    // default-src 'none' +10, frame-ancestors +5, referrer private +5.
    expect(graded.score).toBe(120);
    expect(graded.grade).toBe("A+");
    for (const t of graded.tests) expect(t.score_modifier).toBe(MODIFIERS[t.result as keyof typeof MODIFIERS]);
  });

  it("a bare site: the penalties add up, bonuses do not count under 90", () => {
    const graded = gradeScan(seen({ "referrer-policy": "no-referrer" }, { http: { status: 200, location: null } }));
    // csp -25, hsts -20, xcto -5, xfo -20, redirection -20 = 10; the referrer bonus does not count.
    expect(graded.score).toBe(10);
    expect(graded.grade).toBe("F");
    const failing = graded.tests.filter((t) => !t.pass).map((t) => t.name);
    expect(failing).toEqual(["content-security-policy", "redirection", "strict-transport-security", "x-content-type-options", "x-frame-options"]);
    for (const t of graded.tests.filter((t) => !t.pass)) expect(t.description).toMatch(/[A-Z].*\./);
  });

  it("one missing header from a good site: HSTS missing is -20 and the bonuses go (80, B+)", () => {
    const { "strict-transport-security": _, ...rest } = GOOD;
    const graded = gradeScan(seen(rest));
    expect(graded.tests.find((t) => t.name === "strict-transport-security")).toMatchObject({
      pass: false,
      result: "hsts-not-implemented",
      score_modifier: -20,
    });
    expect(graded.score).toBe(80);
    expect(graded.grade).toBe("B+");
  });
});

describe("the tests", () => {
  it("strict-transport-security: max-age of at least 15552000 passes, less fails, invalid and http fail", () => {
    expect(hstsTest(seen({ "strict-transport-security": "max-age=15552000" })).result).toBe("hsts-implemented-max-age-at-least-six-months");
    expect(hstsTest(seen({ "strict-transport-security": "max-age=15551999" }))).toMatchObject({ pass: false, score_modifier: -10 });
    expect(hstsTest(seen({ "strict-transport-security": "includeSubDomains" })).result).toBe("hsts-header-invalid");
    expect(hstsTest(seen({ "strict-transport-security": "max-age=1, max-age=2" })).result).toBe("hsts-header-invalid");
    expect(hstsTest(seen({ "strict-transport-security": "max-age=31536000" }, { finalUrl: "http://site.example/" })).result).toBe(
      "hsts-not-implemented-no-https",
    );
  });

  it("content-security-policy: present, unsafe-inline in script-src, fallbacks, nonces, eval, insecure schemes, invalid", () => {
    const csp = (value: string, extra: Partial<ScanObservation> = {}) => cspTest(seen({ "content-security-policy": value }, extra));
    expect(cspTest(seen({}))).toMatchObject({ result: "csp-not-implemented", pass: false, score_modifier: -25 });
    expect(cspTest(seen({ "content-security-policy-report-only": "default-src 'self'" })).result).toBe("csp-not-implemented-but-reporting-enabled");
    expect(csp("default-src 'self'")).toMatchObject({ result: "csp-implemented-with-no-unsafe", pass: true, score_modifier: 5 });
    expect(csp("default-src 'self'; script-src 'self' 'unsafe-inline'")).toMatchObject({
      result: "csp-implemented-with-unsafe-inline",
      pass: false,
      score_modifier: -20,
    });
    // 'unsafe-inline' in default-src reaches script-src when script-src is absent.
    expect(csp("default-src 'self' 'unsafe-inline'").result).toBe("csp-implemented-with-unsafe-inline");
    // A nonce makes browsers ignore 'unsafe-inline'.
    expect(csp("default-src 'self'; script-src 'self' 'unsafe-inline' 'nonce-AbC123'").result).toBe("csp-implemented-with-no-unsafe");
    // No script-src nor default-src: anything may run.
    expect(csp("frame-ancestors 'none'").result).toBe("csp-implemented-with-unsafe-inline");
    expect(csp("default-src 'self'; script-src 'self' 'unsafe-eval'").result).toBe("csp-implemented-with-unsafe-eval");
    expect(csp("default-src 'self'; connect-src http://api.example").result).toBe("csp-implemented-with-insecure-scheme");
    expect(csp("default-src 'self'; img-src http://cdn.example")).toMatchObject({
      result: "csp-implemented-with-insecure-scheme-in-passive-content-only",
      pass: true,
    });
    expect(csp("default-src 'self'; style-src 'self' 'unsafe-inline'")).toMatchObject({
      result: "csp-implemented-with-unsafe-inline-in-style-src-only",
      pass: true,
    });
    expect(csp("default-src 'none'")).toMatchObject({ result: "csp-implemented-with-no-unsafe-default-src-none", score_modifier: 10 });
    expect(csp("default-src 'self'; !!! nonsense")).toMatchObject({ result: "csp-header-invalid", pass: false });
    expect(csp(";;").result).toBe("csp-header-invalid");
    expect(csp("default-src 'self'; frame-ancestors 'self'").data).toMatchObject({ frame_ancestors: true });
  });

  it("framing: frame-ancestors in the CSP (+5), else X-Frame-Options DENY / SAMEORIGIN, else -20", () => {
    expect(framingTest(seen({ "content-security-policy": "frame-ancestors 'none'" }))).toMatchObject({
      result: "x-frame-options-implemented-via-csp",
      score_modifier: 5,
      pass: true,
    });
    expect(framingTest(seen({ "x-frame-options": "SAMEORIGIN" }))).toMatchObject({ result: "x-frame-options-sameorigin-or-deny", pass: true });
    expect(framingTest(seen({ "x-frame-options": "ALLOWALL" }))).toMatchObject({ result: "x-frame-options-header-invalid", pass: false, score_modifier: -20 });
    expect(framingTest(seen({}))).toMatchObject({ result: "x-frame-options-not-implemented", pass: false });
  });

  it("referrer-policy: private passes with +5, missing passes with 0, unsafe and unknown fail with -5", () => {
    expect(referrerPolicyTest(seen({ "referrer-policy": "no-referrer" }))).toMatchObject({ result: "referrer-policy-private", score_modifier: 5, pass: true });
    expect(referrerPolicyTest(seen({}))).toMatchObject({ result: "referrer-policy-not-implemented", pass: true });
    expect(referrerPolicyTest(seen({ "referrer-policy": "unsafe-url" }))).toMatchObject({ result: "referrer-policy-unsafe", pass: false });
    // The last known policy wins.
    expect(referrerPolicyTest(seen({ "referrer-policy": "unsafe-url, strict-origin" })).result).toBe("referrer-policy-private");
    expect(referrerPolicyTest(seen({ "referrer-policy": "whatever" })).result).toBe("referrer-policy-header-invalid");
  });

  it("cookies: Secure, HttpOnly on sessions, SameSite; names and flags kept, never values", () => {
    const cookies = (lines: string[], hsts = false) => cookiesTest(seen({}, { setCookies: lines }), hsts);
    expect(cookies([])).toMatchObject({ result: "cookies-not-found", pass: true });
    expect(cookies(["sessionid=SECRET123; Secure; HttpOnly; SameSite=Lax"])).toMatchObject({
      result: "cookies-secure-with-httponly-sessions-and-samesite",
      score_modifier: 5,
      pass: true,
    });
    expect(cookies(["theme=dark; Secure"])).toMatchObject({ result: "cookies-secure-with-httponly-sessions", pass: true });
    expect(cookies(["theme=dark"])).toMatchObject({ result: "cookies-without-secure-flag", score_modifier: -20, pass: false });
    expect(cookies(["theme=dark"], true).result).toBe("cookies-without-secure-flag-but-protected-by-hsts");
    expect(cookies(["sessionid=SECRET123; HttpOnly"])).toMatchObject({ result: "cookies-session-without-secure-flag", score_modifier: -40 });
    expect(cookies(["login=SECRET123; Secure"]).result).toBe("cookies-session-without-httponly-flag");
    expect(cookies(["csrftoken=SECRET123; Secure"]).result).toBe("cookies-anticsrf-without-samesite-flag");
    expect(cookies(["a=1; Secure; SameSite=Sometimes"]).result).toBe("cookies-samesite-flag-invalid");
    // The worst cookie decides.
    const mixed = cookies(["theme=dark; Secure; SameSite=Strict", "sessionid=SECRET123; SameSite=Lax"]);
    expect(mixed.result).toBe("cookies-session-without-secure-flag");
    expect(mixed.data).toEqual([
      { name: "theme", secure: true, http_only: false, same_site: "Strict" },
      { name: "sessionid", secure: false, http_only: false, same_site: "Lax" },
    ]);
    expect(JSON.stringify(mixed)).not.toContain("SECRET123");
  });

  it("CORS: * with credentials and an echoed origin with credentials fail (-50); * alone and named origins pass", () => {
    expect(corsTest(seen({}))).toMatchObject({ result: "cross-origin-resource-sharing-not-implemented", pass: true });
    expect(corsTest(seen({ "access-control-allow-origin": "*" }))).toMatchObject({
      result: "cross-origin-resource-sharing-implemented-with-public-access",
      pass: true,
    });
    expect(corsTest(seen({ "access-control-allow-origin": "*", "access-control-allow-credentials": "true" }))).toMatchObject({
      result: "cross-origin-resource-sharing-implemented-with-universal-access",
      score_modifier: -50,
      pass: false,
    });
    expect(corsTest(seen({ "access-control-allow-origin": ORIGIN, "access-control-allow-credentials": "true" })).pass).toBe(false);
    expect(corsTest(seen({ "access-control-allow-origin": "https://app.example", "access-control-allow-credentials": "true" })).result).toBe(
      "cross-origin-resource-sharing-implemented-with-restricted-access",
    );
  });

  it("redirection: from the one http:// answer", () => {
    const r = (http: ScanObservation["http"]) => redirectionTest(seen({}, { http }));
    expect(r({ status: 301, location: "https://site.example/" })).toMatchObject({ result: "redirection-to-https", pass: true });
    expect(r(null)).toMatchObject({ result: "redirection-not-needed-no-http", pass: true });
    expect(r({ status: 200, location: null })).toMatchObject({ result: "redirection-missing", pass: false, score_modifier: -20 });
    expect(r({ status: 302, location: "https://elsewhere.example/" })).toMatchObject({ result: "redirection-off-host-from-http", score_modifier: -5 });
    expect(r({ status: 302, location: "http://site.example/login" })).toMatchObject({
      result: "redirection-not-to-https-on-initial-redirection",
      score_modifier: -10,
    });
  });
});
