// Accepting work, one way for every product (docs/ARCHITECTURE.md "A job"): reserve the quota
// units (a refusal is the product's 429, before anything is stored), store the work, queue its
// messages, then start its first attempt from the request's waitUntil. The stored row is the
// commitment (a transactional outbox): once it is stored the request succeeds. A queue that refuses
// the messages is logged, not answered: the row waits in a claimable state, the first attempt still
// runs, and the product's sweep (jobs/sweep.ts, or its store's alarm) queues it again once stale.
// Why not undo and answer 5xx: the undo is a second write that can fail in turn, and a 5xx after a
// stored row invites a retry that does the work twice; the sweep exists anyway for lost messages.
// Units go back here and only here: all of them when the store fails, the unused ones when the
// stored result used fewer (a duplicate, a recipient whose mail could not be stored). The steps
// after the reservation are commit.ts's, which work that meters nothing (platform mail, which the
// quota itself sends) uses directly.
import type { Env } from "../../env";
import type { ApiError } from "../errors";
import { log } from "../log";
import type { Service } from "../plans";
import { consumeQuota, releaseQuota, type QuotaOwner } from "../quota";
import { commit, type Background } from "./commit";

export type { Background } from "./commit";

/** One unit of accepted work, as a product declares it. */
export interface AcceptSpec<T> {
  /** Names the work in logs ("audit export", "mail send", ...). */
  name: string;
  env: Env;
  /** Units reserved before the store (none: the work is not metered). */
  quota?: {
    owner: QuotaOwner;
    service: Service;
    units: number;
    /**
     * The units were taken already, by the caller (a public route takes them beside its bucket
     * and caps: quota.ts `spendBeside`), and this gives them back: nothing is reserved here, and
     * it is called when the store fails or the stored result did not use them.
     */
    reserved?: () => Promise<void>;
    /**
     * A reservation that failed (the 429, or the meter unreachable): the answer instead (a copy
     * of stored work costs nothing), or throw the product's error. Default: the error as it is.
     */
    refused?: (error: unknown) => Promise<T>;
  };
  /** Stores the work in one write (nothing half-written); its ApiErrors are the product's answers. */
  store: () => Promise<T>;
  /** Units the stored result did not use (a duplicate stored nothing); given back. */
  unused?: (stored: T) => number;
  /**
   * The product's "could not be stored" error for a store that failed with anything but an
   * ApiError (relay and audit: 503). Default: the error as it is (the root handler's 500).
   */
  unavailable?: () => ApiError;
  /** Queues the stored work's messages; a refusal is logged, never answered. None: stored work with no job (log entries). */
  enqueue?: (stored: T) => Promise<unknown>;
  /** The first attempt, started from `background` after the enqueue; never awaited by the answer. */
  attempt?: (stored: T) => Promise<unknown>;
  /** The request's waitUntil; null (no execution context): no first attempt, the queue does it. */
  background?: Background | null;
}

/**
 * Accepts one unit of work (see the header): reserve, store, enqueue, first attempt. Returns what
 * the store returned. Throws the reservation's refusal, or the product's error when the store
 * fails (its units given back first); never throws for the queue or the first attempt.
 */
export async function accept<T>(spec: AcceptSpec<T>): Promise<T> {
  const { env, quota, name } = spec;
  const units = quota?.units ?? 0;
  if (quota && units > 0 && !quota.reserved) {
    try {
      await consumeQuota(env, quota.owner, quota.service, units);
    } catch (error) {
      if (quota.refused) return quota.refused(error);
      throw error;
    }
  }
  const giveBack = async (amount: number) => {
    if (!quota || amount <= 0) return;
    // Logged, never thrown: the answer is already decided (an error, or the stored work).
    const given = quota.reserved ? quota.reserved() : releaseQuota(env, quota.owner.teamId, quota.service, Math.min(amount, units));
    await given.catch((error) =>
      log.error(`${name}: giving back quota units failed`, { team_id: quota.owner.teamId, service: quota.service, error: String(error) }),
    );
  };

  return commit({
    name,
    store: spec.store,
    unavailable: spec.unavailable,
    enqueue: spec.enqueue,
    attempt: spec.attempt,
    background: spec.background,
    storeFailed: () => giveBack(units),
    stored: (stored) => giveBack(spec.unused?.(stored) ?? 0),
  });
}
