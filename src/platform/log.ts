// The platform's logger: one JSON line per event on the console (Workers Logs and `wrangler tail`
// read them), with the same field names everywhere. What identifies the work comes from the scope
// it runs in, so services deep in a request or a consumer never pass it down: the request context
// middleware opens a scope with the request id (from the Hono context), the queue loop one per
// message (queue, message id, attempts), the cron runner one per job, each Durable Object alarm
// one naming its class. The scope is an AsyncLocalStorage (nodejs_compat), so it follows the
// request's promises, its waitUntil work included.
import { AsyncLocalStorage } from "node:async_hooks";

/** What identifies the work an event belongs to; a scope inside another adds to it. */
export interface LogScope {
  /** The request's id (the `x-request-id` header it answered with). */
  request_id?: string;
  /** The queue a consumer reads, the message's id and its deliveries so far (1 = first). */
  queue?: string;
  message_id?: string;
  attempts?: number;
  /** The cron expression and the job's name. */
  cron?: string;
  job?: string;
  /** The Durable Object class whose alarm runs. */
  alarm?: string;
}

export type LogLevel = "info" | "warn" | "error";

const scopes = new AsyncLocalStorage<LogScope>();

/** Runs `work` with `scope` added to every line it logs (and what it starts, waitUntil included). */
export function withLogScope<T>(scope: LogScope, work: () => T): T {
  return scopes.run({ ...scopes.getStore(), ...scope }, work);
}

/** The scope of the work running now (empty outside any). */
export function currentLogScope(): LogScope {
  return { ...scopes.getStore() };
}

function write(level: LogLevel, msg: string, fields: Record<string, unknown> | undefined): void {
  const line = JSON.stringify({ level, msg, ...scopes.getStore(), ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

/**
 * Logs one event: `{ level, msg, ...scope, ...fields }` on one line. Field names are snake_case
 * (`team_id`, `report_id`, `count`); an error goes in `error` as `String(error)`.
 * Levels map to console.log / console.warn / console.error.
 */
export const log = {
  info: (msg: string, fields?: Record<string, unknown>) => write("info", msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => write("warn", msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => write("error", msg, fields),
};
