// The SSRF guard for outbound calls to user-supplied URLs (src/platform/ssrf.ts).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BlockedUrlError, checkUrl, isSafeUrl, safeFetch, ssrfOptions } from "../../src/platform/ssrf";

const STRICT = { allowPrivate: false };
const DEV = { allowPrivate: true };

describe("checkUrl (production: allowPrivate false)", () => {
  it.each([
    "http://example.com/hook",
    "https://localhost/hook",
    "https://LOCALHOST:8443/",
    "https://api.localhost/",
    "https://127.0.0.1/",
    "https://127.1.2.3/",
    "https://0.0.0.0/",
    "https://10.0.0.1/",
    "https://10.255.255.255/",
    "https://172.16.0.1/",
    "https://172.31.255.254/",
    "https://192.168.1.1/",
    "https://169.254.169.254/latest/meta-data/",
    "https://100.64.0.1/",
    "https://[::1]/",
    "https://[::]/",
    "https://[fd00::1]/",
    "https://[fc00::1]/",
    "https://[fe80::1]/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::ffff:10.0.0.1]/",
    "https://2130706433/",
    "https://0x7f000001/",
    "https://017700000001/",
    "https://127.1/",
    "https://user:pass@example.com/",
    "https://user@example.com/",
    "https://metadata.google.internal/",
    "https://printer.local/",
    "https://intranet/",
    "ftp://example.com/",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "not a url",
    "",
  ])("refuses %s", (url) => {
    const reason = checkUrl(url, STRICT);
    expect({ url, refused: typeof reason === "string" && reason.length > 0 }).toEqual({ url, refused: true });
    expect(isSafeUrl(url, STRICT)).toBe(false);
  });

  it.each([
    "https://example.com",
    "https://example.com/hooks/1?x=y",
    "https://hooks.slack.com/services/T000/B000/XXX",
    "https://example.com:8443/path",
    "https://93.184.216.34/",
    "https://172.32.0.1/",
    "https://[2606:4700:4700::1111]/",
  ])("allows %s", (url) => {
    expect({ url, reason: checkUrl(url, STRICT) }).toEqual({ url, reason: null });
    expect(isSafeUrl(url, STRICT)).toBe(true);
  });

  it("explains why", () => {
    expect(checkUrl("http://example.com", STRICT)).toBe("must use https");
    expect(checkUrl("https://user:pass@example.com", STRICT)).toBe("must not contain credentials");
    expect(checkUrl("https://10.0.0.1", STRICT)).toBe("must not point to a private or internal address");
  });
});

describe("checkUrl (dev and tests: allowPrivate true)", () => {
  it("allows http and loopback/private targets", () => {
    for (const url of ["http://127.0.0.1:8787/hook", "http://localhost:3000", "https://10.0.0.1/", "http://[::1]:9000/"]) {
      expect({ url, reason: checkUrl(url, DEV) }).toEqual({ url, reason: null });
    }
  });

  it("still refuses credentials and non-HTTP schemes", () => {
    expect(checkUrl("http://user:pass@127.0.0.1/", DEV)).not.toBeNull();
    expect(checkUrl("ftp://127.0.0.1/", DEV)).not.toBeNull();
    expect(checkUrl("file:///etc/passwd", DEV)).not.toBeNull();
    expect(checkUrl("nope", DEV)).not.toBeNull();
  });
});

describe("ssrfOptions", () => {
  it("reads ALLOW_PRIVATE_TARGETS; only the string 'true' allows private targets", () => {
    expect(ssrfOptions({ ALLOW_PRIVATE_TARGETS: "true" })).toEqual({ allowPrivate: true });
    expect(ssrfOptions({ ALLOW_PRIVATE_TARGETS: "false" })).toEqual({ allowPrivate: false });
    expect(ssrfOptions({ ALLOW_PRIVATE_TARGETS: "1" })).toEqual({ allowPrivate: false });
    expect(ssrfOptions({})).toEqual({ allowPrivate: false });
    expect(ssrfOptions(env)).toEqual({ allowPrivate: true }); // the test configuration
  });
});

describe("safeFetch", () => {
  it("throws BlockedUrlError before any request for a refused URL", async () => {
    await expect(safeFetch("https://169.254.169.254/latest", {}, { allowPrivate: false, timeoutMs: 1_000 })).rejects.toBeInstanceOf(BlockedUrlError);
    await expect(safeFetch("http://example.com/", {}, { allowPrivate: false, timeoutMs: 1_000 })).rejects.toThrow(/URL refused: must use https/);
  });
});
