// What an isolate may remember between requests, in one shape: a Map with a freshness bound (an
// entry older than `ttlMs` is not served, which is the bound for a change made on another isolate
// to apply), a size bound (the oldest entry goes first), and forgetting that wins over a look-up in
// flight (a look-up that started before a change must not store its stale answer). Changes made
// on this isolate forget the entries they touch at once. Every cache is registered, so a change to
// a team (plan, owner) is forgotten in all of them with one call.
import { nowMs } from "./clock";

export interface IsolateCacheOptions<V> {
  /** How long an entry is served after it was stored. */
  ttlMs: number;
  /** Entries kept; storing one more drops the oldest. */
  max: number;
  /** The team an entry belongs to, for forgetTeamEverywhere; omitted when entries belong to none. */
  teamOf?: (value: V) => string;
}

const registry = new Set<IsolateCache<unknown>>();

export class IsolateCache<V> {
  /** Insertion order is age order (a stored entry is moved to the end). */
  private readonly entries = new Map<string, { at: number; value: V }>();
  /** Bumped by every forget: see mark(). */
  private epoch = 0;

  constructor(private readonly options: IsolateCacheOptions<V>) {
    registry.add(this as IsolateCache<unknown>);
  }

  /** The value stored for `key` while it is fresh: 0 ≤ age < ttl (a clock moved back makes it stale, never eternal). */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const age = nowMs() - entry.at;
    return age >= 0 && age < this.options.ttlMs ? entry.value : undefined;
  }

  /** Taken before a look-up starts; set() with it stores nothing when something was forgotten since. */
  mark(): number {
    return this.epoch;
  }

  set(key: string, value: V, mark: number): void {
    if (mark !== this.epoch) return;
    this.entries.delete(key);
    if (this.entries.size >= this.options.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { at: nowMs(), value });
  }

  /** The fresh value of `key`, else `load()`'s answer, stored unless it is null or something was forgotten meanwhile. */
  async getOrLoad(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const mark = this.mark();
    const value = await load();
    if (value !== null) this.set(key, value, mark);
    return value;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Drops every entry `matches`, and the answers of look-ups in flight. */
  forget(matches: (value: V, key: string) => boolean): void {
    this.epoch++;
    for (const [key, entry] of this.entries) if (matches(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.forget(() => true);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Drops the entries of `teamId` (no-op for a cache whose entries belong to no team). */
  forgetTeam(teamId: string): void {
    const teamOf = this.options.teamOf;
    if (teamOf) this.forget((value) => teamOf(value) === teamId);
  }
}

/** A team's plan or owner changed: every cache of this isolate drops what it holds of the team. */
export function forgetTeamEverywhere(teamId: string): void {
  for (const cache of registry) cache.forgetTeam(teamId);
}
