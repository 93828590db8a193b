// Hashing, random tokens, HMAC signing and AES-256-GCM for secrets at rest, all on Web Crypto.
// Imported CryptoKeys are cached per key material: importing is the expensive part.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** base64url without padding. */
export function toBase64Url(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = "";
  for (let i = 0; i < view.length; i++) binary += String.fromCharCode(view[i]);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Decodes base64url or standard base64 (padding optional). Throws on invalid input. */
export function fromBase64Url(text: string): Uint8Array {
  const normalized = text.replace(/-/g, "+").replace(/_/g, "/");
  const padded = normalized + "=".repeat((4 - (normalized.length % 4)) % 4);
  const binary = atob(padded);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

export function toBase64(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = "";
  for (let i = 0; i < view.length; i++) binary += String.fromCharCode(view[i]);
  return btoa(binary);
}

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (let i = 0; i < view.length; i++) out += view[i].toString(16).padStart(2, "0");
  return out;
}

/** Cryptographically random bytes. */
export function randomBytes(length: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(length));
}

/** A random URL-safe token with `bytes` bytes of entropy, optionally prefixed (`whsec_...`). */
export function randomToken(bytes = 32, prefix = ""): string {
  return prefix + toBase64Url(randomBytes(bytes));
}

/** SHA-256 of a string, as lowercase hex. Used to store API keys and ingest tokens. */
export async function sha256Hex(text: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** Constant-time comparison of two strings (equal length required for a match). */
export function timingSafeEqual(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  if (left.byteLength !== right.byteLength) {
    // Compare against itself so the time does not depend on where the strings differ.
    crypto.subtle.timingSafeEqual(left, left);
    return false;
  }
  return crypto.subtle.timingSafeEqual(left, right);
}

const hmacKeys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string | Uint8Array): Promise<CryptoKey> {
  const cacheKey = typeof secret === "string" ? "s:" + secret : "b:" + toBase64(secret);
  let key = hmacKeys.get(cacheKey);
  if (!key) {
    const raw = typeof secret === "string" ? encoder.encode(secret) : secret;
    key = crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    if (hmacKeys.size > 1000) hmacKeys.clear();
    hmacKeys.set(cacheKey, key);
  }
  return key;
}

/** HMAC-SHA256 of `message` with `secret` (a string, or raw bytes), as raw bytes. */
export async function hmacSha256(secret: string | Uint8Array, message: string | Uint8Array): Promise<Uint8Array> {
  const data = typeof message === "string" ? encoder.encode(message) : message;
  return new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), data));
}

const aesKeys = new Map<string, Promise<CryptoKey>>();

function aesKey(base64Key: string): Promise<CryptoKey> {
  let key = aesKeys.get(base64Key);
  if (!key) {
    const raw = fromBase64Url(base64Key);
    if (raw.byteLength !== 32) throw new Error("ENCRYPTION_KEY must be base64 of 32 bytes");
    key = crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
    aesKeys.set(base64Key, key);
  }
  return key;
}

/**
 * Encrypts a secret for storage with AES-256-GCM under ENCRYPTION_KEY.
 * Output: `v1.<iv b64url>.<ciphertext b64url>`; the version lets keys be rotated later.
 */
export async function encryptSecret(encryptionKey: string, plaintext: string): Promise<string> {
  const iv = randomBytes(12);
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await aesKey(encryptionKey), encoder.encode(plaintext));
  return `v1.${toBase64Url(iv)}.${toBase64Url(sealed)}`;
}

/**
 * Decrypts a value produced by encryptSecret. Throws when the key is wrong or the value altered.
 * During a key rotation `previousKey` (ENCRYPTION_KEY_PREVIOUS) opens values sealed before it:
 * the GCM tag tells the keys apart, so both are tried, the current one first.
 */
export async function decryptSecret(encryptionKey: string, sealed: string, previousKey?: string): Promise<string> {
  const [version, iv, data] = sealed.split(".");
  if (version !== "v1" || !iv || !data) throw new Error("Unsupported secret format");
  try {
    return decoder.decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64Url(iv) }, await aesKey(encryptionKey), fromBase64Url(data)));
  } catch (error) {
    if (!previousKey || previousKey === encryptionKey) throw error;
    return decoder.decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64Url(iv) }, await aesKey(previousKey), fromBase64Url(data)));
  }
}

/** The first byte of bytes sealed by encryptBytes (never 0x1f, the first byte of a gzip stream). */
const SEALED_BYTES_V1 = 0x01;

/**
 * Encrypts bytes for storage with AES-256-GCM under ENCRYPTION_KEY: `0x01 || iv (12) ||
 * ciphertext+tag`. For stored blobs that may hold secrets (idempotent answers).
 */
export async function encryptBytes(encryptionKey: string, plain: Uint8Array): Promise<Uint8Array> {
  const iv = randomBytes(12);
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await aesKey(encryptionKey), plain));
  const out = new Uint8Array(1 + iv.byteLength + sealed.byteLength);
  out[0] = SEALED_BYTES_V1;
  out.set(iv, 1);
  out.set(sealed, 1 + iv.byteLength);
  return out;
}

/** True when `bytes` were produced by encryptBytes. */
export function isSealedBytes(bytes: Uint8Array): boolean {
  return bytes.byteLength > 13 && bytes[0] === SEALED_BYTES_V1;
}

/** Decrypts bytes sealed by encryptBytes, with the previous key during a rotation (as decryptSecret). */
export async function decryptBytes(encryptionKey: string, sealed: Uint8Array, previousKey?: string): Promise<Uint8Array> {
  if (!isSealedBytes(sealed)) throw new Error("Unsupported sealed format");
  const iv = sealed.subarray(1, 13);
  const data = sealed.subarray(13);
  try {
    return new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv }, await aesKey(encryptionKey), data));
  } catch (error) {
    if (!previousKey || previousKey === encryptionKey) throw error;
    return new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv }, await aesKey(previousKey), data));
  }
}

/**
 * Signs a JSON payload into a compact URL-safe token `<payload b64url>.<hmac b64url>` with SIGNING_KEY.
 * Used for share links and short-lived download links.
 */
export async function signToken(signingKey: string, payload: Record<string, unknown>): Promise<string> {
  const body = toBase64Url(encoder.encode(JSON.stringify(payload)));
  const mac = toBase64Url(await hmacSha256(signingKey, body));
  return `${body}.${mac}`;
}

/**
 * Verifies a token from signToken; returns its payload, or null when malformed or tampered.
 * During a key rotation `previousKey` (SIGNING_KEY_PREVIOUS) still accepts tokens signed before it.
 */
export async function verifyToken<T = Record<string, unknown>>(signingKey: string, token: string, previousKey?: string): Promise<T | null> {
  const dot = token.indexOf(".");
  if (dot <= 0 || dot !== token.lastIndexOf(".")) return null;
  const body = token.slice(0, dot);
  const mac = token.slice(dot + 1);
  const keys = previousKey && previousKey !== signingKey ? [signingKey, previousKey] : [signingKey];
  let valid = false;
  for (const key of keys) if (timingSafeEqual(toBase64Url(await hmacSha256(key, body)), mac)) valid = true;
  if (!valid) return null;
  try {
    return JSON.parse(decoder.decode(fromBase64Url(body))) as T;
  } catch {
    return null;
  }
}
