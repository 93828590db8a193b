// VAPID key pairs (RFC 8292): ECDSA P-256 on Web Crypto. Keys travel in the formats of
// @block65/webcrypto-web-push and of browsers' `applicationServerKey`: the public key is the
// base64url raw 65-byte uncompressed point, the private key the base64url 32-byte `d` of its JWK.
import { fromBase64Url, toBase64Url } from "../../platform/crypto";

export interface VapidKeyPair {
  publicKey: string;
  privateKey: string;
}

const P256 = { name: "ECDSA", namedCurve: "P-256" } as const;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** A fresh key pair. */
export async function generateVapidKeys(): Promise<VapidKeyPair> {
  const pair = (await crypto.subtle.generateKey(P256, true, ["sign", "verify"])) as CryptoKeyPair;
  const raw = (await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer;
  const jwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  return { publicKey: toBase64Url(raw), privateKey: jwk.d! };
}

/** The bytes of a base64url key of an exact length, or null. */
function decodeKey(text: string, length: number): Uint8Array | null {
  if (!BASE64URL.test(text)) return null;
  try {
    const bytes = fromBase64Url(text);
    return bytes.byteLength === length ? bytes : null;
  } catch {
    return null;
  }
}

/** Why a public key is refused, or null: 65 bytes, uncompressed (0x04), a point on P-256. */
export async function publicKeyProblem(publicKey: string): Promise<string | null> {
  const bytes = decodeKey(publicKey, 65);
  if (bytes?.[0] !== 0x04) return "must be a base64url-encoded 65-byte uncompressed P-256 public key";
  try {
    await crypto.subtle.importKey("raw", bytes, P256, true, ["verify"]);
    return null;
  } catch {
    return "is not a point on the P-256 curve";
  }
}

// PKCS#8 prefix of an EC P-256 private key that carries only `d` (no public key): importing it
// makes Web Crypto compute the public point, which is how a public key is derived from `d`.
const PKCS8_PREFIX = new Uint8Array([
  0x30, 0x41, 0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
  0x04, 0x27, 0x30, 0x25, 0x02, 0x01, 0x01, 0x04, 0x20,
]);

/** The public key of a private `d`, or null when `d` is not a valid P-256 private key. */
export async function derivePublicKey(privateKey: string): Promise<string | null> {
  const d = decodeKey(privateKey, 32);
  if (!d) return null;
  const der = new Uint8Array(PKCS8_PREFIX.byteLength + 32);
  der.set(PKCS8_PREFIX);
  der.set(d, PKCS8_PREFIX.byteLength);
  try {
    const key = await crypto.subtle.importKey("pkcs8", der, P256, true, ["sign"]);
    const jwk = (await crypto.subtle.exportKey("jwk", key)) as JsonWebKey;
    if (!jwk.x || !jwk.y) return null;
    const point = new Uint8Array(65);
    point[0] = 0x04;
    point.set(fromBase64Url(jwk.x), 1);
    point.set(fromBase64Url(jwk.y), 33);
    return toBase64Url(point);
  } catch {
    return null;
  }
}

/**
 * Proves that `privateKey` belongs to `publicKey`: imports the JWK with x/y from the public key
 * and `d`, signs a challenge and verifies it with the public key alone.
 */
export async function keysMatch(publicKey: string, privateKey: string): Promise<boolean> {
  const point = decodeKey(publicKey, 65);
  if (!point || !decodeKey(privateKey, 32)) return false;
  const x = toBase64Url(point.slice(1, 33));
  const y = toBase64Url(point.slice(33, 65));
  try {
    const signer = await crypto.subtle.importKey("jwk", { kty: "EC", crv: "P-256", x, y, d: privateKey }, P256, false, ["sign"]);
    const verifier = await crypto.subtle.importKey("raw", point, P256, false, ["verify"]);
    const challenge = crypto.getRandomValues(new Uint8Array(32));
    const algorithm = { name: "ECDSA", hash: "SHA-256" };
    const signature = await crypto.subtle.sign(algorithm, signer, challenge);
    return await crypto.subtle.verify(algorithm, verifier, signature, challenge);
  } catch {
    return false;
  }
}
