// Live tails of one log project, held in memory by its store (LogStore): each open tail is a
// Server-Sent Events stream with the filters of the entry query. The store hands every append to
// `publish`, which writes each matching entry as one `data:` event. Bounded on every side: at most
// MAX_TAILS open per project, each ends after MAX_TAIL_MS (the client reconnects), a keep-alive
// comment every KEEP_ALIVE_MS keeps proxies from closing an idle stream and finds a vanished client,
// and a reader too slow to take what it is sent has at most MAX_TAIL_BUFFER_BYTES waiting: past
// that entries are skipped and counted, and an `event: skipped` says how many once there is room.
// A tail follows the key that opened it: every CREDENTIAL_CHECK_MS the keys are read again, and a
// revoked key's tails end with `event: end` (`credential_revoked`).
import { log } from "../../../platform/log";
import { entryView } from "../logs.store";
import type { EntryRecord } from "./log-store";

/** Open tails per project (one store): the 11th answers 429. */
export const MAX_TAILS = 10;
/** A tail ends after this long with `event: end`; EventSource clients reconnect on their own. */
export const MAX_TAIL_MS = 10 * 60_000;
/** Interval of the keep-alive comment (and of the duration check). */
export const KEEP_ALIVE_MS = 15_000;
/** Bytes written to a tail and not yet taken by its reader, past which entries are skipped. */
export const MAX_TAIL_BUFFER_BYTES = 1024 * 1024;
/**
 * How often the credentials of the open tails are checked: a tail ends within this long of its
 * key's revocation (docs/ARCHITECTURE.md "Open streams follow their credential": within 10 s).
 */
export const CREDENTIAL_CHECK_MS = 5_000;

/** Which of the given API key ids may still read the project's entries (unrevoked, `logs:read`). */
export type CredentialCheck = (keyIds: string[]) => Promise<Set<string>>;

/** The entry query's filters a tail applies (no time bounds: a tail is about what arrives now). */
export interface TailFilter {
  level?: string;
  stream?: string;
  service?: string;
  trace_id?: string;
  /** Case-insensitive substring of the message. */
  q?: string;
}

interface Tail {
  projectId: string;
  /**
   * The API key that opened the tail: the stream lives only as long as the key may read. Null for
   * the console's tail, which follows its session and membership itself (platform/follow-credential.ts).
   */
  keyId: string | null;
  filter: TailFilter;
  /** `filter.q` lower-cased once. */
  needle: string | null;
  controller: ReadableStreamDefaultController<Uint8Array>;
  /** Entries skipped since the last `skipped` event. */
  skipped: number;
  deadline: number;
  closed: boolean;
}

const encoder = new TextEncoder();

export class TailSet {
  private readonly tails = new Set<Tail>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private credentialTimer: ReturnType<typeof setInterval> | null = null;

  /** `credentialsLive` answers which keys of the open tails may still read (one D1 read per check). */
  constructor(private readonly credentialsLive: CredentialCheck) {}

  get size(): number {
    return this.tails.size;
  }

  /** Opens a tail: its event stream, or null when the project already has MAX_TAILS open. */
  open(projectId: string, keyId: string | null, filter: TailFilter, now: number): ReadableStream<Uint8Array> | null {
    if (this.tails.size >= MAX_TAILS) return null;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const readable = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          controller = c;
        },
        // The client went away (the read side was cancelled): the slot is free at once.
        cancel: () => this.drop(tail),
      },
      // Nothing is wanted ahead of the reader: desiredSize is minus the bytes waiting for it.
      new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
    );
    const tail: Tail = {
      projectId,
      keyId,
      filter,
      needle: filter.q ? filter.q.toLowerCase() : null,
      controller,
      skipped: 0,
      deadline: now + MAX_TAIL_MS,
      closed: false,
    };
    this.tails.add(tail);
    // `retry` tells EventSource how soon to reconnect after the stream ends; the comment makes the
    // answer's headers and first bytes leave at once.
    this.write(tail, `retry: 1000\n: tail of project ${projectId}\n\n`);
    this.timer ??= setInterval(() => this.sweep(Date.now()), KEEP_ALIVE_MS);
    this.credentialTimer ??= setInterval(() => void this.checkCredentials(), CREDENTIAL_CHECK_MS);
    return readable;
  }

  /**
   * Ends, with `event: end` and reason `credential_revoked`, every tail whose key was revoked (or
   * no longer holds `logs:read`) since it opened; returns how many. The interval calls it every
   * CREDENTIAL_CHECK_MS; tests call it directly. When the check itself fails (D1 unreachable) the
   * tails stay open until the next check: failing closed would cut every tail on a D1 hiccup,
   * while a revoked key cannot open a new one meanwhile (auth reads D1 too).
   */
  async checkCredentials(): Promise<number> {
    const keyIds = [...new Set([...this.tails].flatMap((tail) => (tail.keyId === null ? [] : [tail.keyId])))];
    if (keyIds.length === 0) return 0;
    let live: Set<string>;
    try {
      live = await this.credentialsLive(keyIds);
    } catch (error) {
      log.error("log tails: credential check failed", { error: String(error) });
      return 0;
    }
    let ended = 0;
    for (const tail of this.tails) {
      if (tail.keyId === null || live.has(tail.keyId)) continue;
      this.end(tail, "credential_revoked");
      ended++;
    }
    return ended;
  }

  /** Writes every row that matches each tail's filters, as the entry query would answer it. */
  publish(rows: Iterable<EntryRecord>): void {
    if (this.tails.size === 0) return;
    for (const row of rows) {
      let event: string | null = null;
      let lower: string | null = null;
      for (const tail of this.tails) {
        const f = tail.filter;
        if ((f.level !== undefined && row.level !== f.level) || (f.stream !== undefined && row.stream !== f.stream)) continue;
        if ((f.service !== undefined && row.service !== f.service) || (f.trace_id !== undefined && row.trace_id !== f.trace_id)) continue;
        if (tail.needle !== null && !(lower ??= row.message.toLowerCase()).includes(tail.needle)) continue;
        event ??= `data: ${JSON.stringify(entryView(tail.projectId, row))}\n\n`;
        this.send(tail, event);
      }
    }
  }

  /**
   * The keep-alive run: ends tails past their deadline, writes a comment (and any skipped count)
   * to the others. A write to a client that vanished fails and frees its slot.
   */
  sweep(now: number): void {
    for (const tail of this.tails) {
      if (now >= tail.deadline) this.end(tail, "max_duration");
      else if (this.flushSkipped(tail)) this.write(tail, ": keep-alive\n\n");
    }
  }

  /**
   * Writes a comment to every tail. A client that went away is noticed only when a write to its
   * stream fails (the transport buffers the first write after a disconnect); the store pings
   * before it refuses a tail at the cap, so a reconnecting client does not wait for its own ghost.
   */
  ping(): void {
    for (const tail of this.tails) if (this.flushSkipped(tail)) this.write(tail, ": ping\n\n");
  }

  /** Ends every tail (the project is being deleted). */
  closeAll(reason: string): void {
    for (const tail of this.tails) this.end(tail, reason);
  }

  private send(tail: Tail, event: string): void {
    const bytes = encoder.encode(event);
    if (!this.flushSkipped(tail) || pending(tail) + bytes.byteLength > MAX_TAIL_BUFFER_BYTES) {
      tail.skipped++;
      return;
    }
    this.write(tail, bytes);
  }

  /** Writes the pending `skipped` notice if there is room; false when the reader is still backed up. */
  private flushSkipped(tail: Tail): boolean {
    if (pending(tail) >= MAX_TAIL_BUFFER_BYTES) return false;
    if (tail.skipped > 0) {
      this.write(tail, `event: skipped\ndata: ${JSON.stringify({ skipped: tail.skipped })}\n\n`);
      tail.skipped = 0;
    }
    return true;
  }

  private write(tail: Tail, text: string | Uint8Array): void {
    if (tail.closed) return;
    try {
      tail.controller.enqueue(typeof text === "string" ? encoder.encode(text) : text);
    } catch {
      this.drop(tail);
    }
  }

  /** Ends a tail with a last event saying why, then closes its stream. */
  private end(tail: Tail, reason: string): void {
    this.write(tail, `event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
    tail.closed = true;
    this.tails.delete(tail);
    try {
      tail.controller.close();
    } catch {
      // already errored or closed by the reader
    }
    this.stopWhenIdle();
  }

  private drop(tail: Tail): void {
    if (!this.tails.delete(tail)) return;
    tail.closed = true;
    try {
      tail.controller.error(new Error("tail closed"));
    } catch {
      // already closed
    }
    this.stopWhenIdle();
  }

  private stopWhenIdle(): void {
    if (this.tails.size > 0) return;
    if (this.timer !== null) clearInterval(this.timer);
    if (this.credentialTimer !== null) clearInterval(this.credentialTimer);
    this.timer = null;
    this.credentialTimer = null;
  }
}

/** Bytes enqueued for a tail and not yet taken by its reader. */
function pending(tail: Tail): number {
  return Math.max(0, -(tail.controller.desiredSize ?? 0));
}
