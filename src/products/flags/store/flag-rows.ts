// What crosses the RPC boundary of the flag store: results with the refusal the Worker turns into
// its ApiError (an ApiError does not survive RPC), and the shapes of history, schedules and insights.
import type { FieldErrors } from "../../../platform/errors";
import type { Serve } from "../evaluate";
import type { Actor } from "../flags.schemas";

export interface StoreRefusal {
  status: 404 | 409 | 412 | 422;
  message: string;
  details?: FieldErrors;
}

export type StoreResult<T> = { ok: true; value: T } | { ok: false; refusal: StoreRefusal };

export const ok = <T>(value: T): StoreResult<T> => ({ ok: true, value });
export const refuse = (status: StoreRefusal["status"], message: string, details?: FieldErrors): StoreResult<never> => ({
  ok: false,
  refusal: details ? { status, message, details } : { status, message },
});
export const invalid = (details: FieldErrors) => refuse(422, "Validation failed", details);

export interface HistoryEntry {
  version: number;
  at: string;
  actor: Actor;
  changes: string[];
}

export interface ScheduledChangeInput {
  environment: string;
  /** Due instant, ms. */
  at: number;
  enabled?: boolean;
  fallthrough?: Serve;
}

export interface ScheduledChange {
  id: string;
  flag: string;
  environment: string;
  at: string;
  enabled?: boolean;
  fallthrough?: Serve;
  status: "pending" | "applied" | "failed";
  actor: Actor;
  created_at: string;
  applied_at: string | null;
  applied_version: number | null;
  error: string | null;
}

/** One counter increment of the insights: evaluations or exposures of a variant in an hour. */
export interface InsightCount {
  flag: string;
  environment: string;
  /** `YYYY-MM-DDTHH` UTC. */
  hour: string;
  variant: string;
  source: "evaluation" | "exposure";
  count: number;
}

/** What an isolate flushes to the store: counters, the instants flags were last evaluated, custom events. */
export interface RecordBatch {
  counts: InsightCount[];
  /** Flag evaluated (or tracked with a team key) in an environment at an instant: marks it fresh. */
  evaluated: Array<{ flag: string; environment: string; at: string }>;
  custom: Array<{ name: string; environment: string; hour: string; count: number; value: number }>;
}

export interface FlagInsights {
  flag: string;
  last_evaluated_at: string | null;
  /** Per environment, hour and variant, oldest hour first. */
  hours: Array<{ environment: string; hour: string; variant: string; evaluations: number; exposures: number }>;
}
