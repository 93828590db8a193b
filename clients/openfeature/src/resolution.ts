// What the server and the web provider share: an answer of the platform (a local evaluation, or an
// entry of the client bootstrap in OFREP's bulk shape) turned into OpenFeature's ResolutionDetails,
// with the requested type checked the way OpenFeature's OFREP providers check it, and the context
// made the JSON the platform's HTTP paths would have received (a Date becomes its ISO string), so
// one context gets one answer from every path.
import type { EvaluationContext, FlagValue, ResolutionDetails } from "@openfeature/core";

export type FlagKind = "boolean" | "string" | "number" | "object";

/** OpenFeature's error codes this package answers (the values of core's ErrorCode enum). */
export type ErrorCodeName = "FLAG_NOT_FOUND" | "TYPE_MISMATCH" | "TARGETING_KEY_MISSING" | "INVALID_CONTEXT" | "PARSE_ERROR" | "PROVIDER_NOT_READY" | "GENERAL";

/** An entry of `POST /flags/client/bootstrap` (OFREP's bulk shape): a success or an error. */
export interface BulkEntry {
  key: string;
  value?: unknown;
  reason?: string;
  variant?: string;
  metadata?: Record<string, string | number | boolean>;
  errorCode?: string;
  errorDetails?: string;
}

const KNOWN_CODES = new Set<string>([
  "FLAG_NOT_FOUND",
  "TYPE_MISMATCH",
  "TARGETING_KEY_MISSING",
  "INVALID_CONTEXT",
  "PARSE_ERROR",
  "PROVIDER_NOT_READY",
  "GENERAL",
]);

/** An error resolution: the caller's default value, reason ERROR and the code. */
export function failed<T extends FlagValue>(defaultValue: T, code: string, message: string): ResolutionDetails<T> {
  const errorCode = (KNOWN_CODES.has(code) ? code : "GENERAL") as ErrorCodeName;
  return { value: defaultValue, reason: "ERROR", errorCode: errorCode as ResolutionDetails<T>["errorCode"], errorMessage: message };
}

/** Whether a served value has the type asked for (`typeof`, as @openfeature/ofrep-provider decides; for an object flag, an object or array, not null). */
export function hasKind(value: unknown, kind: FlagKind): boolean {
  if (kind === "object") return typeof value === "object" && value !== null;
  return typeof value === kind;
}

/** A served value as ResolutionDetails, TYPE_MISMATCH when it is not of the asked type. */
export function resolved<T extends FlagValue>(
  key: string,
  kind: FlagKind,
  defaultValue: T,
  served: { value: unknown; variant: string | null | undefined; reason: string; version: number | null | undefined },
): ResolutionDetails<T> {
  if (!hasKind(served.value, kind))
    return failed(defaultValue, "TYPE_MISMATCH", `flag ${key} serves a ${served.value === null ? "null" : typeof served.value}, not a ${kind}`);
  const details: ResolutionDetails<T> = { value: served.value as T, reason: served.reason };
  if (served.variant != null) details.variant = served.variant;
  if (served.version != null) details.flagMetadata = { version: served.version };
  return details;
}

/** The resolution of one bootstrap entry (an OFREP error entry keeps its code). */
export function resolveEntry<T extends FlagValue>(key: string, kind: FlagKind, defaultValue: T, entry: BulkEntry | undefined): ResolutionDetails<T> {
  if (!entry) return failed(defaultValue, "FLAG_NOT_FOUND", `flag ${key} not found`);
  if (entry.errorCode) return failed(defaultValue, entry.errorCode, entry.errorDetails ?? entry.errorCode);
  const version = entry.metadata?.version;
  return resolved(key, kind, defaultValue, {
    value: entry.value,
    variant: entry.variant,
    reason: entry.reason ?? "UNKNOWN",
    version: typeof version === "number" ? version : null,
  });
}

/** The context as the platform's HTTP paths receive it: its JSON (Dates as ISO strings, undefined dropped). */
export function contextJson(context: EvaluationContext | undefined): Record<string, unknown> {
  if (!context) return {};
  return JSON.parse(JSON.stringify(context)) as Record<string, unknown>;
}

/** `base` without trailing slashes, joined with `path`. */
export function urlOf(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}

/** A fetch that gives up after `ms`. */
export async function fetchWithin(fetcher: typeof fetch, url: string, init: RequestInit, ms: number): Promise<Response> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer from ${url} within ${ms} ms`)), ms);
  try {
    return await fetcher(url, { ...init, signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

/** The error text of a failed answer (the platform's `{error}` body when there is one). */
export async function describeFailure(res: Response, what: string): Promise<string> {
  let detail = "";
  try {
    const text = await res.text();
    try {
      const body = JSON.parse(text) as { error?: unknown };
      detail = typeof body.error === "string" ? body.error : text.slice(0, 200);
    } catch {
      detail = text.slice(0, 200);
    }
  } catch {
    /* no body */
  }
  return `${what} answered ${res.status}${detail ? `: ${detail}` : ""}`;
}
