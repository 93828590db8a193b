// Log ingest: the ingest-token lookup, judging entries (single and NDJSON), and storing a set of
// entries: the caps in one D1 batch (new streams, the per-day byte counter; CHECK constraints keep
// both exact even when two batches race past the pre-checks), then the entries in one RPC to the
// project's store (a Durable Object, one transaction), so a failure stores nothing.
import { log } from "../../platform/log";
import { tooLargeMessage } from "../../platform/body";
import { isCheckViolation } from "../../platform/db-errors";
import { utf8Length } from "../../platform/sizes";
import type { Env } from "../../env";
import { LOG_LEVELS, MAX_STREAMS_PER_PROJECT } from "../../db/schema/logs";
import { nowMs } from "../../platform/clock";
import { sha256Hex } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { accept } from "../../platform/jobs/accept";
import { ENTRY_LIMITS, LogEntryInput, MESSAGE_REQUIRED, TIMESTAMP_FIELDS, TIMESTAMP_WINDOW, timestampMs } from "./logs.schemas";
import { entryRow, logStore, rowChunks } from "./logs.store";
import { addDailyBytes, countKnownStreams, deleteStreams, insertStreams, recountStreams, selectIngestProject, subtractDailyBytes } from "./logs.queries";

export const MB = 1024 * 1024;
/** Batch body cap (spec: 5 MB), counted in bytes actually read. */
export const MAX_BATCH_BYTES = 5 * MB;
/** Single-entry body cap (the spec is silent; one entry must fit a D1 row). */
export const MAX_SINGLE_BYTES = 1 * MB;
/** Lines counted per batch (spec: 10,000 entries); later lines are dropped. */
export const MAX_BATCH_ENTRIES = 10_000;

export const INGEST_MESSAGES = {
  streamLimit: `Stream limit exceeded for this project (max ${MAX_STREAMS_PER_PROJECT} streams)`,
  dailyLimit: "Daily log ingestion limit exceeded",
  unavailable: "Log storage temporarily unavailable",
  batchTooLarge: tooLargeMessage(MAX_BATCH_BYTES),
  singleTooLarge: tooLargeMessage(MAX_SINGLE_BYTES),
  badToken: "Invalid or missing ingest token",
} as const;

/** The project behind an ingest token, with what ingest needs of its team and of today's usage. */
export interface IngestProject {
  id: string;
  teamId: string;
  plan: string;
  ownerEmail: string | null;
  dailyLimitMb: number;
  streamCount: number;
  usedTodayBytes: number;
  retentionDays: number;
  tokenHash: string;
}

/** One validated entry, its time (ms) and the bytes it counts for (its raw JSON as received). */
export interface AcceptedEntry {
  entry: LogEntryInput;
  ts: number;
  bytes: number;
}

/** A judged entry: `metadata` holds the unknown top-level fields merged in; `ts` is its time in ms. */
export type JudgedEntry = { entry: LogEntryInput; ts: number } | { error: string };

/** Top-level fields of an entry; any other goes into its metadata. */
const KNOWN_FIELDS: ReadonlySet<string> = new Set(Object.keys(LogEntryInput.shape));

/** UTC day of an instant, `YYYY-MM-DD`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Resolves an ingest token to its project; null when unknown (or rotated away). */
export async function findProjectByToken(db: D1Database, token: string): Promise<IngestProject | null> {
  const tokenHash = await sha256Hex(token);
  const row = await selectIngestProject(db, tokenHash, utcDay(nowMs()));
  if (!row) return null;
  return {
    id: row.id,
    teamId: row.team_id,
    plan: row.plan,
    ownerEmail: row.owner_email,
    dailyLimitMb: row.daily_limit_mb,
    streamCount: row.stream_count,
    usedTodayBytes: row.used,
    retentionDays: row.retention_days,
    tokenHash,
  };
}

/**
 * Judges one decoded JSON value as a log entry at receive time `now`: the entry and its time, or the
 * message of the first failure. The schema (LogEntryInput) is the rule; a plain check of the same
 * rules accepts the common valid entry first because zod without code generation (workerd forbids
 * it) costs ~30 µs an entry, a third of a second per 10,000-line batch. Anything the plain check
 * does not accept goes to the schema, which decides and words the error; a property test keeps the
 * two equal. Then, outside the schema because they depend on the time and on unknown keys:
 * - the time: the first of `timestamp`, `dt`, `time` that is set (not null), within 7 days before
 *   and 1 hour after `now`; none set means `now`;
 * - unknown top-level fields move into `metadata` (an explicit metadata key wins a clash), and the
 *   merged object must stay within the metadata byte cap, else the entry is refused whole.
 */
export function judgeEntry(value: unknown, now: number = nowMs()): JudgedEntry {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { error: MESSAGE_REQUIRED };
  const raw = value as Record<string, unknown>;
  let entry = plainEntry(raw);
  if (!entry) {
    const result = LogEntryInput.safeParse(value);
    if (!result.success) return { error: result.error.issues[0]?.message ?? MESSAGE_REQUIRED };
    entry = result.data;
  }

  let ts = now;
  for (const field of TIMESTAMP_FIELDS) {
    const given = entry[field];
    if (given === undefined || given === null) continue;
    ts = timestampMs(given)!;
    if (ts < now - TIMESTAMP_WINDOW.pastMs) return { error: `${field} must not be more than 7 days before the time of receipt` };
    if (ts > now + TIMESTAMP_WINDOW.futureMs) return { error: `${field} must not be more than 1 hour after the time of receipt` };
    break;
  }

  let extras: [string, unknown][] | null = null;
  for (const key of Object.keys(raw)) if (!KNOWN_FIELDS.has(key)) (extras ??= []).push([key, raw[key]]);
  // Object.fromEntries and spread define own properties, so a "__proto__" key stays plain data.
  const metadata = extras ? { ...Object.fromEntries(extras), ...entry.metadata } : entry.metadata;
  if (metadata && utf8Length(JSON.stringify(metadata)) > ENTRY_LIMITS.metadataBytes) {
    return {
      error: extras
        ? `metadata must be at most ${ENTRY_LIMITS.metadataBytes} bytes (unknown top-level fields are kept in metadata and count towards it)`
        : `metadata must be at most ${ENTRY_LIMITS.metadataBytes} bytes`,
    };
  }
  if (extras) entry = { ...entry, metadata };
  return { entry, ts };
}

const LEVEL_SET: ReadonlySet<unknown> = new Set(LOG_LEVELS);

function optionalText(value: unknown, max: number): boolean {
  return value === undefined || value === null || (typeof value === "string" && value.length >= 1 && value.length <= max);
}

/** A well-formed sender's time (the schema's rule for `timestamp`, `dt` and `time`). */
function optionalTimestamp(value: unknown): boolean {
  return value === undefined || value === null || ((typeof value === "number" || typeof value === "string") && timestampMs(value) !== null);
}

/** The entry when it plainly meets every rule of LogEntryInput (unknown keys dropped), else null. */
export function plainEntry(v: Record<string, unknown>): LogEntryInput | null {
  const { message, level, stream, service, trace_id, span_id, metadata, timestamp, dt, time } = v;
  if (typeof message !== "string" || message.length > ENTRY_LIMITS.message || message.trim().length === 0) return null;
  if (!(level === undefined || level === null || LEVEL_SET.has(level))) return null;
  if (!optionalText(stream, ENTRY_LIMITS.name) || !optionalText(service, ENTRY_LIMITS.name)) return null;
  if (!optionalText(trace_id, ENTRY_LIMITS.id) || !optionalText(span_id, ENTRY_LIMITS.id)) return null;
  if (!(metadata === undefined || metadata === null || (typeof metadata === "object" && !Array.isArray(metadata)))) return null;
  if (!optionalTimestamp(timestamp) || !optionalTimestamp(dt) || !optionalTimestamp(time)) return null;
  const entry: LogEntryInput = { message };
  if (level !== undefined) entry.level = level as LogEntryInput["level"];
  if (stream !== undefined) entry.stream = stream as string | null;
  if (service !== undefined) entry.service = service as string | null;
  if (trace_id !== undefined) entry.trace_id = trace_id as string | null;
  if (span_id !== undefined) entry.span_id = span_id as string | null;
  if (metadata !== undefined) entry.metadata = metadata as Record<string, unknown> | null;
  if (timestamp !== undefined) entry.timestamp = timestamp as string | number | null;
  if (dt !== undefined) entry.dt = dt as string | number | null;
  if (time !== undefined) entry.time = time as string | number | null;
  return entry;
}

/**
 * Splits an NDJSON body into accepted entries and the number dropped. Lines end at `\n` (a `\r`
 * before it is ignored); blank or whitespace-only lines are not lines at all. A line is dropped
 * when it is not JSON, fails validation, or comes after the 10,000th counted entry, so
 * `accepted + dropped` always equals the number of non-empty lines.
 */
export function parseNdjson(body: Uint8Array, now: number = nowMs()): { accepted: AcceptedEntry[]; dropped: number } {
  const decoder = new TextDecoder();
  const accepted: AcceptedEntry[] = [];
  let dropped = 0;
  let start = 0;
  while (start < body.length) {
    let end = body.indexOf(0x0a, start);
    if (end === -1) end = body.length;
    let lineEnd = end;
    if (lineEnd > start && body[lineEnd - 1] === 0x0d) lineEnd--;
    const bytes = lineEnd - start;
    const line = bytes > 0 ? decoder.decode(body.subarray(start, lineEnd)) : "";
    start = end + 1;
    if (line.trim() === "") continue;
    if (accepted.length >= MAX_BATCH_ENTRIES) {
      dropped++;
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      dropped++;
      continue;
    }
    const judged = judgeEntry(value, now);
    if ("error" in judged) dropped++;
    else accepted.push({ entry: judged.entry, ts: judged.ts, bytes });
  }
  return { accepted, dropped };
}

/**
 * Stores accepted entries for a project, all or nothing. Throws the spec's 422 (new stream at
 * the cap), 429 (daily limit, monthly quota) or 503 (the store failed; quota given back).
 *
 * The caps are decided in D1 first (one batch: new streams and the per-day byte counter, whose
 * CHECK constraints hold even when two batches race past the pre-checks), then the entries go to
 * the project's store in one RPC and one transaction. When the store fails, the D1 bookkeeping of
 * this batch is taken back (the day's bytes, the streams it created) and so is the quota.
 */
export async function storeEntries(env: Env, project: IngestProject, accepted: AcceptedEntry[], receivedAt: number = nowMs()): Promise<void> {
  if (accepted.length === 0) return;
  // The entries were judged at this instant: one without a time of its own has ts = created_at.
  const ms = receivedAt;
  const createdIso = new Date(ms).toISOString();
  const day = utcDay(ms);
  const bytes = accepted.reduce((sum, item) => sum + item.bytes, 0);

  const names = [...new Set(accepted.map((item) => item.entry.stream).filter((name): name is string => !!name))];
  let newStreams = false;
  if (names.length > 0) {
    const fresh = names.length - (await countKnownStreams(env.DB, project.id, names));
    if (fresh > 0 && project.streamCount + fresh > MAX_STREAMS_PER_PROJECT) throw streamLimitError();
    newStreams = fresh > 0;
  }

  const limitBytes = project.dailyLimitMb * MB;
  if (project.usedTodayBytes + bytes > limitBytes) throw dailyLimitError();

  // The accept step (platform/jobs/accept.ts): the units first (a meter that cannot be reached
  // refuses the write, quotas fail closed, with the ingest's documented 503, safe to retry), then
  // the store; a store that fails gives them back there. Log entries are stored work with no queue.
  await accept({
    name: "log ingest",
    env,
    quota: {
      owner: { teamId: project.teamId, plan: project.plan, ownerEmail: project.ownerEmail },
      service: "logs",
      units: bytes / MB,
      refused: async (error) => {
        throw error instanceof ApiError ? error : storeFailed(project, accepted.length, error);
      },
    },
    store: () => writeEntries(env, project, accepted, { ms, createdIso, day, bytes, limitBytes, names: newStreams ? names : [] }),
  });
}

/**
 * The D1 bookkeeping of a batch (new streams, the day's bytes) in one batch, then its entries in the
 * project's store. When the store fails, the bookkeeping is taken back; every error is an ApiError.
 */
async function writeEntries(
  env: Env,
  project: IngestProject,
  accepted: AcceptedEntry[],
  batch: { ms: number; createdIso: string; day: string; bytes: number; limitBytes: number; names: string[] },
): Promise<void> {
  const { ms, createdIso, day, bytes, limitBytes, names } = batch;
  const statements: D1PreparedStatement[] = [];
  if (names.length > 0) {
    statements.push(insertStreams(env.DB, project.id, project.teamId, createdIso, names), recountStreams(env.DB, project.id));
  }
  statements.push(addDailyBytes(env.DB, project.id, day, project.teamId, bytes, limitBytes));

  let created: string[] = [];
  try {
    const results = await env.DB.batch<{ name: string }>(statements);
    if (names.length > 0) created = results[0].results.map((row) => row.name);
  } catch (error) {
    // A concurrent batch got past the same pre-check first: the constraint decided.
    if (isCheckViolation(error, "log_stream_cap")) throw streamLimitError();
    if (isCheckViolation(error, "log_daily_limit")) throw dailyLimitError();
    throw storeFailed(project, accepted.length, error);
  }

  try {
    await logStore(env, project.id).append(rowChunks(accepted.map(({ entry, ts }) => entryRow(entry, ts))), {
      receivedAt: ms,
      retentionDays: project.retentionDays,
    });
  } catch (error) {
    // Nothing of the batch is in the store: take back what D1 recorded for it. (A stream this batch
    // created may have been named by a concurrent batch meanwhile; it is recreated on next use.)
    const undo = [subtractDailyBytes(env.DB, project.id, day, bytes)];
    if (created.length > 0) undo.push(deleteStreams(env.DB, project.id, created), recountStreams(env.DB, project.id));
    await env.DB.batch(undo).catch((undoError) => log.error("log store undo failed", { project_id: project.id, error: String(undoError) }));
    throw storeFailed(project, accepted.length, error);
  }
}

function storeFailed(project: IngestProject, entries: number, error: unknown): ApiError {
  log.error("log store failed", { project_id: project.id, entries, error: String((error as Error)?.message ?? error) });
  return new ApiError("unavailable", INGEST_MESSAGES.unavailable);
}

function streamLimitError(): ApiError {
  return new ApiError("validation", INGEST_MESSAGES.streamLimit);
}

function dailyLimitError(): ApiError {
  return new ApiError("daily_limit", INGEST_MESSAGES.dailyLimit);
}
