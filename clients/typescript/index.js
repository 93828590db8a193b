// @ts-check
// The Edge Platform client: openapi-fetch over the types generated from the committed OpenAPI
// document (schema.d.ts from openapi.json), with what the specification's client guidance asks
// for: the team key on every request, an Idempotency-Key on every POST (the same key on each retry
// of one call, so a retried send never runs twice), retries of 429 and 5xx answers and network
// failures with exponential backoff that honours Retry-After, and no retry of any other status.
import createFetchClient from "openapi-fetch";

/** Statuses worth another attempt: the rate limit and the server's own failures. */
const RETRY_STATUSES = (/** @type {number} */ status) => status === 429 || status >= 500;

const DEFAULTS = { retries: 3, baseDelayMs: 500, maxDelayMs: 30_000 };

/**
 * An answer that is not 2xx, with its status and body (one of the platform's error shapes).
 */
export class EdgePlatformError extends Error {
  /**
   * @param {Response} response
   * @param {unknown} body
   */
  constructor(response, body) {
    super(`${response.status} ${messageOf(body) ?? response.statusText}`);
    this.name = "EdgePlatformError";
    this.status = response.status;
    this.body = body;
    this.requestId = response.headers.get("x-request-id");
    const retryAfter = Number(response.headers.get("retry-after"));
    this.retryAfter = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null;
  }
}

/** The message of any of the platform's error shapes: `{error}`, `{error: {message}}`, the audit envelope. */
function messageOf(/** @type {any} */ body) {
  if (!body || typeof body !== "object") return null;
  if (typeof body.error === "string") return body.error;
  if (body.error && typeof body.error === "object") return body.error.message ?? body.error.code ?? null;
  return null;
}

/** Waits `ms`, or less when the signal aborts. */
function sleep(/** @type {number} */ ms, /** @type {AbortSignal | null | undefined} */ signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), resolve(undefined)), { once: true });
  });
}

/**
 * The delay before attempt `attempt` (1 = the first retry): the server's Retry-After when it gave
 * one, else base × 2^(attempt-1) with full jitter, capped.
 */
export function retryDelay(/** @type {number} */ attempt, /** @type {Response | null} */ response, options = DEFAULTS) {
  const retryAfter = Number(response?.headers.get("retry-after"));
  if (Number.isFinite(retryAfter) && retryAfter > 0) return Math.min(retryAfter * 1000, options.maxDelayMs);
  const ceiling = Math.min(options.baseDelayMs * 2 ** (attempt - 1), options.maxDelayMs);
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/**
 * A fetch that retries 429, 5xx and network failures and gives POSTs an Idempotency-Key.
 * @param {typeof fetch} baseFetch
 * @param {typeof DEFAULTS} options
 * @returns {typeof fetch}
 */
function retryingFetch(baseFetch, options) {
  return async (input, init) => {
    const request = new Request(input, init);
    if (request.method === "POST" && !request.headers.has("idempotency-key")) request.headers.set("idempotency-key", crypto.randomUUID());
    for (let attempt = 0; ; attempt++) {
      let response = null;
      try {
        response = await baseFetch(request.clone());
        if (!RETRY_STATUSES(response.status) || attempt >= options.retries) return response;
      } catch (error) {
        if (attempt >= options.retries || request.signal.aborted) throw error;
      }
      await response?.body?.cancel();
      await sleep(retryDelay(attempt + 1, response, options), request.signal);
    }
  };
}

/**
 * A typed client of the API at `baseUrl` (its origin, e.g. `https://api.example.com`) with the team
 * API key `key`: `client.GET("/api/v1/usage")`, `client.POST("/api/v1/surveys", { body })`, ...
 * answer `{ data, error, response }`, both typed from the document. `retries` (default 3),
 * `baseDelayMs` (500) and `maxDelayMs` (30,000) tune the retries; `fetch` replaces the global one.
 * @param {string} baseUrl
 * @param {string | null} [key]
 * @param {Partial<typeof DEFAULTS> & { fetch?: typeof fetch, headers?: Record<string, string> }} [options]
 */
export function createClient(baseUrl, key, options = {}) {
  const { fetch: baseFetch = globalThis.fetch, headers = {}, ...tuning } = options;
  const settings = { ...DEFAULTS, ...tuning };
  return createFetchClient({
    baseUrl: baseUrl.replace(/\/+$/, ""),
    headers: key ? { authorization: `Bearer ${key}`, ...headers } : headers,
    fetch: retryingFetch(baseFetch, settings),
  });
}

/**
 * The data of a result, or an EdgePlatformError with the error body: `const survey = await
 * orThrow(client.GET("/api/v1/surveys/{id}", { params: { path: { id } } }))`.
 * @template {{ data?: unknown, error?: unknown, response: Response }} R
 * @param {R | Promise<R>} result
 * @returns {Promise<NonNullable<R["data"]>>}
 */
export async function orThrow(result) {
  const { data, error, response } = await result;
  if (!response.ok) throw new EdgePlatformError(response, error);
  return /** @type {NonNullable<R["data"]>} */ (data);
}
