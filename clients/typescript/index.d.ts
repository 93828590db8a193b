// Types of the Edge Platform client (index.js): openapi-fetch's client bound to the paths of the
// committed document (schema.d.ts, generated from openapi.json).
import type { Client } from "openapi-fetch";
import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths };
/** The schemas of the document by name: `Schemas["Survey"]`. */
export type Schemas = components["schemas"];

export interface ClientOptions {
  /** Retries of a 429, 5xx or network failure (default 3); 0 turns them off. */
  retries?: number;
  /** First backoff step in ms (default 500), doubled each retry with jitter, unless Retry-After says otherwise. */
  baseDelayMs?: number;
  /** Longest wait between two attempts in ms (default 30,000). */
  maxDelayMs?: number;
  /** Replaces the global fetch. */
  fetch?: typeof fetch;
  /** Headers sent on every request. */
  headers?: Record<string, string>;
}

/** The typed client of `paths`. */
export type EdgePlatformClient = Client<paths>;

/** A typed client of the API at `baseUrl` with the team API key `key` (null: public routes only). */
export function createClient(baseUrl: string, key?: string | null, options?: ClientOptions): EdgePlatformClient;

/** An answer that is not 2xx. */
export class EdgePlatformError extends Error {
  readonly status: number;
  /** The error body in the product's shape (`{error}`, `{error, details}`, the audit envelope, ...). */
  readonly body: unknown;
  readonly requestId: string | null;
  /** Seconds the server asked to wait (429), when it said. */
  readonly retryAfter: number | null;
  constructor(response: Response, body: unknown);
}

/** The data of a result, or throws EdgePlatformError. */
export function orThrow<R extends { data?: unknown; error?: unknown; response: Response }>(result: R | Promise<R>): Promise<NonNullable<R["data"]>>;

/** The wait before retry number `attempt` (1-based): Retry-After when given, else exponential with jitter. */
export function retryDelay(attempt: number, response: Response | null, options?: { baseDelayMs: number; maxDelayMs: number; retries: number }): number;
