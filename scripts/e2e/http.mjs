// Small HTTP and assertion helpers for the end-to-end checks.
import assert from "node:assert/strict";

export { assert };

/** Sends a request; returns { status, headers, body (parsed JSON or text) }. */
export async function request(url, method, path, { key, body, headers = {}, raw } = {}) {
  const init = { method, headers: { ...headers } };
  if (key) init.headers.authorization = `Bearer ${key}`;
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["content-type"] ??= "application/json";
  } else if (raw !== undefined) {
    init.body = raw;
  }
  const res = await fetch(path.startsWith("http") ? path : `${url}${path}`, init);
  const text = await res.text();
  let parsed = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** Polls `fn` until it returns a truthy value or the time runs out. */
export async function eventually(fn, { timeoutMs = 15_000, intervalMs = 250 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms: ${last?.message ?? JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Asserts a status, printing the method-less description and the answer body when it differs. */
export function expectStatus(res, status, what) {
  assert.equal(
    res.status,
    status,
    `${what}: expected ${status}, got ${res.status} ${typeof res.body === "string" ? res.body.slice(0, 500) : JSON.stringify(res.body)}`,
  );
  return res;
}

/** A value an earlier check was meant to produce; fails clearly when that check did not. */
export function need(value, what) {
  if (value === undefined || value === null) throw new Error(`${what} is missing: an earlier check of this suite failed`);
  return value;
}
