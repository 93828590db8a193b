// The steps of accepting work after its quota reservation (jobs/accept.ts): store the work in one
// write, queue its messages (a refusal is logged, never answered: the stored row waits in a
// claimable state for the product's sweep), then start its first attempt from the request's
// waitUntil. Work that meters nothing, such as the platform's own mail (which the quota sends, so
// it cannot go through accept.ts and its reservation), commits here directly.
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import type { KeepAlive } from "../coalesce";
import { ApiError } from "../errors";
import { log } from "../log";

/** Where work that must outlive the answer goes: the request's `executionCtx.waitUntil`. */
export interface Background {
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * The request's background (its waitUntil, jobs/accept.ts's Background), or null when the runtime
 * gave it no ExecutionContext (Hono's getter throws then, e.g. under `app.request()`).
 */
export function backgroundOf(c: Context<AppEnv>): Background | null {
  try {
    const ctx = c.executionCtx;
    return { waitUntil: (work) => ctx.waitUntil(work) };
  } catch {
    return null;
  }
}

/** The request's background, or where the runtime gave it none, one that lets the work run unwatched (it is never dropped: it was begun already). */
export function backgroundOrDetached(c: Context<AppEnv>): Background {
  return backgroundOf(c) ?? { waitUntil: () => undefined };
}

/** A background's waitUntil as a KeepAlive (platform/coalesce.ts): keeps a shared call alive past the request; none outside a request. */
export function keepAliveFrom(background: Background | null): KeepAlive | undefined {
  return background ? (promise) => background.waitUntil(promise) : undefined;
}

/** The request's waitUntil as a KeepAlive; none when the runtime gave the request no ExecutionContext. */
export function keepAliveOf(c: Context<AppEnv>): KeepAlive | undefined {
  return keepAliveFrom(backgroundOf(c));
}

/** Stored work, as its owner declares it. */
export interface CommitSpec<T> {
  /** Names the work in logs ("audit export", "platform mail", ...). */
  name: string;
  /** Stores the work in one write (nothing half-written); its ApiErrors are the product's answers. */
  store: () => Promise<T>;
  /**
   * The product's "could not be stored" error for a store that failed with anything but an
   * ApiError (relay and audit: 503). Default: the error as it is (the root handler's 500).
   */
  unavailable?: () => ApiError;
  /** Queues the stored work's messages; a refusal is logged, never answered. None: stored work with no job. */
  enqueue?: (stored: T) => Promise<unknown>;
  /** The first attempt, started from `background` after the enqueue; never awaited by the answer. */
  attempt?: (stored: T) => Promise<unknown>;
  /** The request's waitUntil; null or absent: no first attempt, the queue does it. */
  background?: Background | null;
  /** Runs when the store failed, before its error is thrown (accept gives its units back); never throws. */
  storeFailed?: () => Promise<void>;
  /** Runs once the work is stored, before it is queued (accept gives back the unused units); never throws. */
  stored?: (stored: T) => Promise<void>;
}

/**
 * Stores, queues and starts one unit of work (see the header). Returns what the store returned;
 * throws the product's error when the store fails; never throws for the queue or the first attempt.
 */
export async function commit<T>(spec: CommitSpec<T>): Promise<T> {
  const { name } = spec;
  let stored: T;
  try {
    stored = await spec.store();
  } catch (error) {
    await spec.storeFailed?.();
    if (error instanceof ApiError || !spec.unavailable) throw error;
    log.error(`${name}: store unavailable`, { error: String(error) });
    throw spec.unavailable();
  }
  await spec.stored?.(stored);

  try {
    await spec.enqueue?.(stored);
  } catch (error) {
    log.error(`${name}: enqueue failed; stored, the sweep queues it again`, { error: String(error) });
  }
  const { attempt, background } = spec;
  if (attempt && background) {
    background.waitUntil(
      Promise.resolve()
        .then(() => attempt(stored))
        .catch((error) => log.error(`${name}: first attempt failed; the queue retries it`, { error: String(error) })),
    );
  }
  return stored;
}
