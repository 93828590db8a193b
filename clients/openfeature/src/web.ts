// The web provider (browsers, and any runtime with fetch, for @openfeature/web-sdk): the client-side
// flags of a client key's environment, evaluated by the platform for the current context in one
// call (`POST /api/v1/flags/client/bootstrap`, ETag/If-None-Match: a 304 keeps the answers), then
// resolved synchronously from that answer as OpenFeature's static-context paradigm wants. A context
// change bootstraps again; an optional poll revalidates (a 304 spends no evaluation); exposures of
// served variants are optionally sent to `POST /api/v1/flags/client/track` in batches, and
// OpenFeature's tracking API sends custom events there.
import {
  type EvaluationContext,
  type Hook,
  type JsonValue,
  type Logger,
  OpenFeatureEventEmitter,
  type Provider,
  ProviderEvents,
  ProviderFatalError,
  type ResolutionDetails,
  type TrackingEventDetails,
} from "@openfeature/web-sdk";
import { type BulkEntry, contextJson, describeFailure, failed, type FlagKind, fetchWithin, resolveEntry, urlOf } from "./resolution.js";

export interface EdgeFlagsWebProviderOptions {
  /** The platform's address, as for OFREP: `https://edge.example.com` (the provider adds `/api/v1/flags/client/...`). */
  baseUrl: string;
  /** A flags client key (`fck_…`) of one environment: it sees that environment's client-side flags only. */
  clientKey: string;
  /** Revalidate the current context's answers every so many ms (default 0: only on a context change or `refresh()`; at least 5,000 otherwise). */
  pollIntervalMs?: number;
  /** Send an exposure (flag, variant, context key) the first time each is served for a bootstrap (default false). */
  trackExposures?: boolean;
  /** How long exposures and tracked events wait to be sent together, in ms (default 2,000). */
  flushIntervalMs?: number;
  /** How long one call may take, in ms (default 10,000). */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

export interface EdgeFlagsWebProviderStats {
  /** Bootstraps answered 200. */
  fetched: number;
  /** Bootstraps answered 304 (the answers were still current). */
  notModified: number;
  /** Bootstraps that failed. */
  failed: number;
  /** Track events accepted by the platform. */
  tracked: number;
}

interface TrackEvent {
  kind: "exposure" | "custom";
  flag?: string;
  variant?: string;
  name?: string;
  context_key: string;
  value?: number;
  at: string;
}

/** The platform takes up to 100 events per track call. */
const TRACK_BATCH = 100;
/** Events kept while the platform cannot be reached (the oldest are dropped past it). */
const TRACK_QUEUE_MAX = 1_000;
const MIN_POLL_MS = 5_000;

/** The flag keys whose answer differs between two bootstraps. */
function changedKeys(before: Map<string, BulkEntry>, after: Map<string, BulkEntry>): string[] {
  const changed: string[] = [];
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    if (JSON.stringify(before.get(key)) !== JSON.stringify(after.get(key))) changed.push(key);
  }
  return changed.sort();
}

/** An OpenFeature web provider over the platform's client bootstrap. */
export class EdgeFlagsWebProvider implements Provider {
  readonly metadata = { name: "edge-platform-flags-web" } as const;
  readonly runsOn = "client" as const;
  readonly events = new OpenFeatureEventEmitter();
  readonly hooks: Hook[] = [];

  private readonly baseUrl: string;
  private readonly clientKey: string;
  private readonly pollMs: number;
  private readonly trackExposures: boolean;
  private readonly flushMs: number;
  private readonly timeoutMs: number;
  private readonly fetcher: typeof fetch;
  private entries: Map<string, BulkEntry> | null = null;
  /** Why there are no answers for the current context (a failed bootstrap after a context change). */
  private missing = "the provider has not bootstrapped yet";
  /** A bootstrap failed after initialization (the SDK shows an error): the next answer for this context emits Ready. */
  private errored = false;
  private contextText: string | null = null;
  private context: Record<string, unknown> = {};
  private etag: string | null = null;
  private exposed = new Set<string>();
  private queue: TrackEvent[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private pollTimer: ReturnType<typeof setInterval> | null = null;
  private readonly counts: EdgeFlagsWebProviderStats = { fetched: 0, notModified: 0, failed: 0, tracked: 0 };

  constructor(options: EdgeFlagsWebProviderOptions) {
    if (!options.baseUrl) throw new TypeError("EdgeFlagsWebProvider: baseUrl is required");
    if (!options.clientKey?.startsWith("fck_")) throw new TypeError("EdgeFlagsWebProvider: clientKey must be a flags client key (fck_…)");
    this.baseUrl = options.baseUrl;
    this.clientKey = options.clientKey;
    const poll = options.pollIntervalMs ?? 0;
    this.pollMs = poll === 0 ? 0 : Math.max(MIN_POLL_MS, poll);
    this.trackExposures = options.trackExposures ?? false;
    this.flushMs = options.flushIntervalMs ?? 2_000;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** Counts of the calls made so far. */
  get stats(): Readonly<EdgeFlagsWebProviderStats> {
    return { ...this.counts };
  }

  async initialize(context?: EvaluationContext): Promise<void> {
    await this.bootstrap(contextJson(context), true);
    if (this.pollMs > 0 && !this.pollTimer) {
      this.pollTimer = setInterval(() => void this.refresh().catch(() => undefined), this.pollMs);
      (this.pollTimer as { unref?: () => void }).unref?.();
    }
  }

  /** A new context: its answers are fetched before the SDK evaluates again (the SDK shows Reconciling meanwhile). */
  async onContextChange(_oldContext: EvaluationContext, newContext: EvaluationContext): Promise<void> {
    await this.bootstrap(contextJson(newContext), false);
  }

  async onClose(): Promise<void> {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = null;
    await this.flush().catch(() => undefined);
  }

  /** Revalidates the current context's answers (If-None-Match; a 304 keeps them). Resolves true when they changed. */
  async refresh(): Promise<boolean> {
    return this.bootstrap(this.context, false);
  }

  private async bootstrap(context: Record<string, unknown>, initial: boolean): Promise<boolean> {
    const text = JSON.stringify(context);
    const sameContext = text === this.contextText;
    const headers: Record<string, string> = { authorization: `Bearer ${this.clientKey}`, "content-type": "application/json", accept: "application/json" };
    if (sameContext && this.etag && this.entries) headers["if-none-match"] = this.etag;
    if (!sameContext) {
      // Another context's answers are never served for this one.
      this.entries = null;
      this.etag = null;
      this.exposed.clear();
      this.context = context;
      this.contextText = text;
    }
    let res: Response;
    try {
      res = await fetchWithin(
        this.fetcher,
        urlOf(this.baseUrl, "/api/v1/flags/client/bootstrap"),
        { method: "POST", headers, body: JSON.stringify({ context }) },
        this.timeoutMs,
      );
    } catch (error) {
      throw this.failure(`the flags bootstrap failed: ${error instanceof Error ? error.message : String(error)}`, initial, false);
    }
    if (res.status === 304 && this.entries) {
      this.counts.notModified++;
      this.recovered(sameContext);
      return false;
    }
    if (res.status !== 200)
      throw this.failure(await describeFailure(res, "POST /api/v1/flags/client/bootstrap"), initial, res.status === 401 || res.status === 403);
    let flags: BulkEntry[];
    try {
      flags = ((await res.json()) as { flags: BulkEntry[] }).flags;
      if (!Array.isArray(flags)) throw new Error("no flags in the answer");
    } catch (error) {
      throw this.failure(`the bootstrap could not be read: ${error instanceof Error ? error.message : String(error)}`, initial, false);
    }
    this.counts.fetched++;
    const before = this.entries;
    this.entries = new Map(flags.map((entry) => [entry.key, entry]));
    this.etag = res.headers.get("etag");
    this.recovered(sameContext);
    if (sameContext && before) {
      const flagsChanged = changedKeys(before, this.entries);
      if (flagsChanged.length > 0) {
        this.events.emit(ProviderEvents.ConfigurationChanged, { flagsChanged });
      }
      return flagsChanged.length > 0;
    }
    return true;
  }

  /** After a failed call, an answer: a refresh says the provider is ready again (a context change reports its own success). */
  private recovered(sameContext: boolean): void {
    if (!this.errored) return;
    this.errored = false;
    if (sameContext) this.events.emit(ProviderEvents.Ready, { message: "the flags were fetched again" });
  }

  private failure(message: string, initial: boolean, fatal: boolean): Error {
    this.counts.failed++;
    if (!this.entries) this.missing = message;
    if (!initial && !this.errored) {
      this.errored = true;
      // A failed revalidation keeps this context's answers: they may be out of date.
      if (this.entries) this.events.emit(ProviderEvents.Stale, { message });
    }
    if (initial && fatal) return new ProviderFatalError(message);
    return new Error(message);
  }

  private resolve<T extends boolean | string | number | JsonValue>(key: string, kind: FlagKind, defaultValue: T): ResolutionDetails<T> {
    if (!this.entries) return failed(defaultValue, "PROVIDER_NOT_READY", this.missing);
    const entry = this.entries.get(key);
    const details = resolveEntry(key, kind, defaultValue, entry);
    if (this.trackExposures && entry && details.errorCode === undefined && details.variant !== undefined) this.expose(key, details.variant);
    return details;
  }

  private contextKeyOf(): string | undefined {
    const key = this.context.key ?? this.context.targetingKey;
    return typeof key === "string" && key.length > 0 ? key : undefined;
  }

  private expose(flag: string, variant: string): void {
    const contextKey = this.contextKeyOf();
    if (!contextKey) return;
    const id = `${flag}\u0000${variant}`;
    if (this.exposed.has(id)) return;
    this.exposed.add(id);
    this.enqueue({ kind: "exposure", flag, variant, context_key: contextKey, at: new Date().toISOString() });
  }

  private enqueue(event: TrackEvent): void {
    this.queue.push(event);
    if (this.queue.length > TRACK_QUEUE_MAX) this.queue.splice(0, this.queue.length - TRACK_QUEUE_MAX);
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => void this.flush().catch(() => undefined), this.flushMs);
      (this.flushTimer as { unref?: () => void }).unref?.();
    }
  }

  /** Sends the queued exposures and events now (in calls of up to 100). Rejects when a call failed; its events are kept for the next flush. */
  async flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, TRACK_BATCH);
      const res = await fetchWithin(
        this.fetcher,
        urlOf(this.baseUrl, "/api/v1/flags/client/track"),
        {
          method: "POST",
          headers: { authorization: `Bearer ${this.clientKey}`, "content-type": "application/json" },
          body: JSON.stringify({ events: batch }),
        },
        this.timeoutMs,
      );
      if (res.status !== 202) {
        const message = await describeFailure(res, "POST /api/v1/flags/client/track");
        // A refused batch (422) would be refused again: drop it; anything else is retried later.
        if (res.status === 422) this.queue.splice(0, batch.length);
        throw new Error(message);
      }
      const accepted = ((await res.json()) as { accepted?: number }).accepted;
      this.counts.tracked += typeof accepted === "number" ? accepted : 0;
      this.queue.splice(0, batch.length);
    }
  }

  /** OpenFeature's tracking API: a custom event of the context (`value` from the details when it is a number). */
  track(trackingEventName: string, context: EvaluationContext, details: TrackingEventDetails): void {
    const ctx = contextJson(context);
    const key = ctx.key ?? ctx.targetingKey;
    if (typeof key !== "string" || key.length === 0) return;
    const event: TrackEvent = { kind: "custom", name: trackingEventName.slice(0, 200), context_key: key, at: new Date().toISOString() };
    if (typeof details?.value === "number" && Number.isFinite(details.value)) event.value = details.value;
    this.enqueue(event);
  }

  resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, _context: EvaluationContext, _logger?: Logger): ResolutionDetails<boolean> {
    return this.resolve(flagKey, "boolean", defaultValue);
  }

  resolveStringEvaluation(flagKey: string, defaultValue: string, _context: EvaluationContext, _logger?: Logger): ResolutionDetails<string> {
    return this.resolve(flagKey, "string", defaultValue);
  }

  resolveNumberEvaluation(flagKey: string, defaultValue: number, _context: EvaluationContext, _logger?: Logger): ResolutionDetails<number> {
    return this.resolve(flagKey, "number", defaultValue);
  }

  resolveObjectEvaluation<T extends JsonValue>(flagKey: string, defaultValue: T, _context: EvaluationContext, _logger?: Logger): ResolutionDetails<T> {
    return this.resolve(flagKey, "object", defaultValue);
  }
}
