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
    // Trailing dots, IPv4 embedded in IPv6, NAT64, 6to4, Teredo, site-local, reserved ranges.
    "https://localhost./",
    "https://localhost../",
    "https://metadata.google.internal./",
    "https://METADATA.GOOGLE.INTERNAL/",
    "https://[::7f00:1]/",
    "https://[::a9fe:a9fe]/",
    "https://[::ffff:7f00:1]/",
    "https://[::ffff:a9fe:a9fe]/",
    "https://[64:ff9b::7f00:1]/",
    "https://[64:ff9b::a9fe:a9fe]/",
    "https://[64:ff9b:1::1]/",
    "https://[2002:7f00:1::]/",
    "https://[2002:a9fe:a9fe::1]/",
    "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    "https://[fec0::1]/",
    "https://[feff::1]/",
    "https://[ff02::1]/",
    "https://[2001:db8::1]/",
    "https://192.0.2.1/",
    "https://198.18.0.1/",
    "https://240.0.0.1/",
    "https://255.255.255.255/",
    "https://224.0.0.1/",
    "https://0x7f.1/",
    "https://0177.0.0.1/",
    "https://1.2.3.4.5/",
    "https://service.arpa/",
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
  it("allows http and loopback targets, which local development needs", () => {
    for (const url of [
      "http://127.0.0.1:8787/hook",
      "http://localhost:3000",
      "http://localhost.:3000",
      "http://api.localhost/",
      "http://[::1]:9000/",
      "http://example.com/",
      "https://example.com/",
    ]) {
      expect({ url, reason: checkUrl(url, DEV) }).toEqual({ url, reason: null });
    }
  });

  it.each([
    "https://10.0.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::a9fe:a9fe]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2002:a9fe:a9fe::1]/",
    "http://[fe80::1]/",
    "http://[fec0::1]/",
    "http://[fd00::1]/",
    "http://metadata.google.internal./",
    "http://metadata/",
    "http://printer.local/",
    "http://intranet/",
  ])("still refuses private, link-local and metadata targets: %s", (url) => {
    expect(checkUrl(url, DEV)).toBe("must not point to a private or internal address");
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
