// Hashing, tokens, AES-GCM secrets and Standard Webhooks signatures (src/platform/crypto.ts,
// src/platform/webhook-signature.ts).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  decryptSecret,
  encryptSecret,
  fromBase64Url,
  randomToken,
  sha256Hex,
  signToken,
  timingSafeEqual,
  toBase64Url,
  verifyToken,
} from "../../src/platform/crypto";
import { newWebhookSecret, signPayload, standardWebhookHeaders, verifyStandardWebhook } from "../../src/platform/webhook-signature";

const OTHER_KEY = toBase64Url(new Uint8Array(32).fill(7));

/** Flips one base64url character of a segment, keeping it valid base64url. */
function flip(text: string, index: number): string {
  const c = text[index];
  return text.slice(0, index) + (c === "A" ? "B" : "A") + text.slice(index + 1);
}

describe("sha256Hex", () => {
  it("matches the FIPS 180-2 test vectors", async () => {
    expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(await sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });
});

describe("randomToken", () => {
  it("is prefixed, URL-safe and different every time", () => {
    const tokens = new Set(Array.from({ length: 50 }, () => randomToken(32, "edp_")));
    expect(tokens.size).toBe(50);
    for (const token of tokens) {
      expect(token).toMatch(/^edp_[A-Za-z0-9_-]{43}$/);
      expect(fromBase64Url(token.slice(4)).byteLength).toBe(32);
    }
  });
});

describe("encryptSecret / decryptSecret", () => {
  it("round-trips, with a fresh IV each time", async () => {
    for (const plain of ["vapid-private-key", "", "ünïcødé ✓ 🔐", "x".repeat(10_000)]) {
      const sealed = await encryptSecret(env.ENCRYPTION_KEY, plain);
      expect(sealed.startsWith("v1.")).toBe(true);
      expect(sealed).not.toContain(plain || "\u0000");
      expect(await decryptSecret(env.ENCRYPTION_KEY, sealed)).toBe(plain);
    }
    const a = await encryptSecret(env.ENCRYPTION_KEY, "same");
    const b = await encryptSecret(env.ENCRYPTION_KEY, "same");
    expect(a).not.toBe(b);
  });

  it("detects a tampered ciphertext or IV", async () => {
    const sealed = await encryptSecret(env.ENCRYPTION_KEY, "top secret value");
    const [version, iv, data] = sealed.split(".");
    await expect(decryptSecret(env.ENCRYPTION_KEY, `${version}.${iv}.${flip(data, 3)}`)).rejects.toThrow();
    await expect(decryptSecret(env.ENCRYPTION_KEY, `${version}.${iv}.${flip(data, data.length - 2)}`)).rejects.toThrow();
    await expect(decryptSecret(env.ENCRYPTION_KEY, `${version}.${flip(iv, 0)}.${data}`)).rejects.toThrow();
    await expect(decryptSecret(env.ENCRYPTION_KEY, `${version}.${iv}.${data.slice(0, -4)}`)).rejects.toThrow();
  });

  it("refuses another key, another version and malformed values", async () => {
    const sealed = await encryptSecret(env.ENCRYPTION_KEY, "secret");
    await expect(decryptSecret(OTHER_KEY, sealed)).rejects.toThrow();
    await expect(decryptSecret(env.ENCRYPTION_KEY, sealed.replace(/^v1\./, "v2."))).rejects.toThrow();
    await expect(decryptSecret(env.ENCRYPTION_KEY, "not-a-secret")).rejects.toThrow();
    await expect(decryptSecret(env.ENCRYPTION_KEY, "v1..")).rejects.toThrow();
  });

  it("refuses an encryption key that is not 32 bytes", async () => {
    await expect(encryptSecret(toBase64Url(new Uint8Array(16)), "x")).rejects.toThrow();
  });
});

describe("signToken / verifyToken", () => {
  const payload = { report_id: "r-1", exp: 1_900_000_000, nested: { a: [1, 2] } };

  it("round-trips the payload in a URL-safe token", async () => {
    const token = await signToken(env.SIGNING_KEY, payload);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(await verifyToken(env.SIGNING_KEY, token)).toEqual(payload);
  });

  it("returns null for a tampered payload, a tampered MAC, or another key", async () => {
    const token = await signToken(env.SIGNING_KEY, payload);
    const [body, mac] = token.split(".");
    const forged = toBase64Url(new TextEncoder().encode(JSON.stringify({ ...payload, report_id: "r-2" })));
    expect(await verifyToken(env.SIGNING_KEY, `${forged}.${mac}`)).toBeNull();
    expect(await verifyToken(env.SIGNING_KEY, `${flip(body, 2)}.${mac}`)).toBeNull();
    expect(await verifyToken(env.SIGNING_KEY, `${body}.${flip(mac, 5)}`)).toBeNull();
    expect(await verifyToken(env.SIGNING_KEY, `${body}.${mac.slice(0, -1)}`)).toBeNull();
    expect(await verifyToken("another-signing-key", token)).toBeNull();
  });

  it("returns null for malformed tokens", async () => {
    for (const token of ["", "abc", ".abc", "abc.", "a.b.c", `${await signToken(env.SIGNING_KEY, payload)}.x`]) {
      expect({ token, result: await verifyToken(env.SIGNING_KEY, token) }).toEqual({ token, result: null });
    }
  });

  it("returns null for a correctly signed body that is not JSON", async () => {
    const body = toBase64Url(new TextEncoder().encode("not json"));
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(env.SIGNING_KEY), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = toBase64Url(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)));
    expect(await verifyToken(env.SIGNING_KEY, `${body}.${mac}`)).toBeNull();
  });
});

describe("timingSafeEqual", () => {
  it("compares strings exactly", () => {
    expect(timingSafeEqual("abc", "abc")).toBe(true);
    expect(timingSafeEqual("", "")).toBe(true);
    expect(timingSafeEqual("abc", "abd")).toBe(false);
    expect(timingSafeEqual("abc", "ab")).toBe(false);
    expect(timingSafeEqual("ab", "abc")).toBe(false);
    expect(timingSafeEqual("abc", "ABC")).toBe(false);
    expect(timingSafeEqual("é", "e")).toBe(false);
  });
});

describe("Standard Webhooks signatures", () => {
  it("matches the Standard Webhooks reference vector", async () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const signature = await signPayload(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}');
    expect(signature).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("headers verify; any change to body, id, timestamp or secret fails", async () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const body = JSON.stringify({ type: "invoice.paid", id: 42 });
    const ts = 1_900_000_000;
    const h = await standardWebhookHeaders(secret, "msg_1", ts, body);
    expect(Object.keys(h).sort()).toEqual(["webhook-id", "webhook-signature", "webhook-timestamp"]);
    expect(h["webhook-id"]).toBe("msg_1");
    expect(h["webhook-timestamp"]).toBe(String(ts));
    expect(h["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const headers = { id: h["webhook-id"], timestamp: h["webhook-timestamp"], signature: h["webhook-signature"] };

    expect(await verifyStandardWebhook(secret, headers, body, ts)).toBe(true);
    expect(await verifyStandardWebhook(secret, headers, body + " ", ts)).toBe(false);
    expect(await verifyStandardWebhook(secret, { ...headers, id: "msg_2" }, body, ts)).toBe(false);
    expect(await verifyStandardWebhook(secret, { ...headers, timestamp: String(ts + 1) }, body, ts)).toBe(false);
    expect(await verifyStandardWebhook(newWebhookSecret(), headers, body, ts)).toBe(false);
    expect(await verifyStandardWebhook(secret, { ...headers, signature: null }, body, ts)).toBe(false);
    expect(await verifyStandardWebhook(secret, { ...headers, timestamp: "abc" }, body, ts)).toBe(false);
  });

  it("accepts a timestamp within the tolerance and refuses a stale or future one", async () => {
    const secret = newWebhookSecret();
    const ts = 1_900_000_000;
    const h = await standardWebhookHeaders(secret, "msg_t", ts, "{}");
    const headers = { id: h["webhook-id"], timestamp: h["webhook-timestamp"], signature: h["webhook-signature"] };
    expect(await verifyStandardWebhook(secret, headers, "{}", ts + 300)).toBe(true);
    expect(await verifyStandardWebhook(secret, headers, "{}", ts - 300)).toBe(true);
    expect(await verifyStandardWebhook(secret, headers, "{}", ts + 301)).toBe(false);
    expect(await verifyStandardWebhook(secret, headers, "{}", ts - 301)).toBe(false);
    expect(await verifyStandardWebhook(secret, headers, "{}", ts + 3_600, 7_200)).toBe(true);
  });

  it("accepts a list of signatures when one matches (secret rotation)", async () => {
    const secret = newWebhookSecret();
    const ts = 1_900_000_000;
    const valid = await signPayload(secret, "msg_r", ts, "{}");
    const stale = await signPayload(newWebhookSecret(), "msg_r", ts, "{}");
    expect(await verifyStandardWebhook(secret, { id: "msg_r", timestamp: String(ts), signature: `${stale} ${valid}` }, "{}", ts)).toBe(true);
    expect(await verifyStandardWebhook(secret, { id: "msg_r", timestamp: String(ts), signature: stale }, "{}", ts)).toBe(false);
  });
});
