// The server provider (Node, for @openfeature/server-sdk): the environment's whole ruleset fetched
// with a team key (`GET /api/v1/flags/ruleset`, ETag/If-None-Match: a 304 keeps the cache),
// refreshed on an interval and on demand, and every flag evaluated locally by the platform's own
// evaluator (src/products/flags/evaluate.ts, bundled into this package at build time: the same
// code as the Worker's, never a copy). A new ruleset emits ConfigurationChanged with the flags it
// changed; a failed refresh keeps serving the last ruleset and emits Stale until one succeeds.
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
} from "@openfeature/server-sdk";
import { contextKey, evaluateFlag, type PreparedRuleset, prepareRuleset, type Ruleset } from "../../../src/products/flags/evaluate";
import { contextJson, describeFailure, failed, type FlagKind, fetchWithin, resolved, urlOf } from "./resolution.js";

export interface EdgeFlagsProviderOptions {
  /** The platform's address, as for OFREP: `https://edge.example.com` (the provider adds `/api/v1/flags/ruleset`). */
  baseUrl: string;
  /** A team API key (`edp_…`) holding `flags:read`. Keep it on the server. */
  apiKey: string;
  /** The environment whose ruleset is evaluated (default `production`). */
  environment?: string;
  /** How often the ruleset is revalidated, in ms (default 15,000; at least 1,000; 0: only `refresh()`). */
  refreshIntervalMs?: number;
  /** How long one fetch of the ruleset may take, in ms (default 10,000). */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/** What the provider has fetched so far. */
export interface EdgeFlagsProviderStats {
  /** Answers 200 (a ruleset was received). */
  fetched: number;
  /** Answers 304 (the cached ruleset was still current). */
  notModified: number;
  /** Fetches that failed (network, timeout, non-2xx). */
  failed: number;
}

export const DEFAULT_REFRESH_INTERVAL_MS = 15_000;
const MIN_REFRESH_INTERVAL_MS = 1_000;

/** The flag keys whose evaluation a new ruleset may change: new, removed or re-versioned flags, and flags using a changed segment. */
function changedFlags(before: Ruleset | null, after: Ruleset): string[] {
  if (!before) return Object.keys(after.flags).sort();
  const changed = new Set<string>();
  for (const key of new Set([...Object.keys(before.flags), ...Object.keys(after.flags)])) {
    const a = before.flags[key];
    const b = after.flags[key];
    if (!a || !b || a.version !== b.version) changed.add(key);
  }
  const segments = new Set<string>();
  for (const key of new Set([...Object.keys(before.segments), ...Object.keys(after.segments)])) {
    if (JSON.stringify(before.segments[key]) !== JSON.stringify(after.segments[key])) segments.add(key);
  }
  if (segments.size > 0) {
    for (const [key, flag] of Object.entries(after.flags)) {
      const uses = flag.config?.rules.some((rule) => rule.clauses.some((c) => c.op === "in_segment" && c.values.some((v) => segments.has(String(v)))));
      if (uses) changed.add(key);
    }
  }
  return [...changed].sort();
}

/** An OpenFeature server provider evaluating the platform's flags locally. */
export class EdgeFlagsProvider implements Provider {
  readonly metadata = { name: "edge-platform-flags" } as const;
  readonly runsOn = "server" as const;
  readonly events = new OpenFeatureEventEmitter();
  readonly hooks: Hook[] = [];

  private readonly url: string;
  private readonly apiKey: string;
  private readonly intervalMs: number;
  private readonly timeoutMs: number;
  private readonly fetcher: typeof fetch;
  private prepared: PreparedRuleset | null = null;
  private etag: string | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private inFlight: Promise<boolean> | null = null;
  private stale = false;
  private readonly counts: EdgeFlagsProviderStats = { fetched: 0, notModified: 0, failed: 0 };

  constructor(options: EdgeFlagsProviderOptions) {
    if (!options.baseUrl) throw new TypeError("EdgeFlagsProvider: baseUrl is required");
    if (!options.apiKey) throw new TypeError("EdgeFlagsProvider: apiKey is required");
    const environment = options.environment ?? "production";
    this.url = urlOf(options.baseUrl, `/api/v1/flags/ruleset?environment=${encodeURIComponent(environment)}`);
    this.apiKey = options.apiKey;
    const interval = options.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS;
    this.intervalMs = interval === 0 ? 0 : Math.max(MIN_REFRESH_INTERVAL_MS, interval);
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** The version of the ruleset being evaluated (null before the first fetch). */
  get rulesetVersion(): number | null {
    return this.prepared?.ruleset.version ?? null;
  }

  /** Counts of the fetches made so far. */
  get stats(): Readonly<EdgeFlagsProviderStats> {
    return { ...this.counts };
  }

  /**
   * Fetches the ruleset once; the SDK marks the provider ready when it resolves. A refused key
   * (401/403) is fatal; after another failure the interval keeps trying, and the first ruleset
   * received emits Ready.
   */
  async initialize(): Promise<void> {
    try {
      await this.fetchRuleset(true);
    } catch (error) {
      if (error instanceof ProviderFatalError) throw error;
      this.stale = true;
      this.startTimer();
      throw error;
    }
    this.startTimer();
  }

  private startTimer(): void {
    if (this.intervalMs === 0 || this.timer) return;
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.intervalMs);
    // Node: a pending refresh never keeps the process alive.
    (this.timer as { unref?: () => void }).unref?.();
  }

  async onClose(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Revalidates the ruleset now (with If-None-Match; a 304 keeps it). Resolves true when a new
   * ruleset was received. Concurrent calls share one fetch. Rejects when the fetch failed (the last
   * ruleset is still served, and Stale was emitted).
   */
  refresh(): Promise<boolean> {
    this.inFlight ??= this.fetchRuleset(false).finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async fetchRuleset(initial: boolean): Promise<boolean> {
    let res: Response;
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, accept: "application/json" };
      if (this.etag) headers["if-none-match"] = this.etag;
      res = await fetchWithin(this.fetcher, this.url, { headers }, this.timeoutMs);
    } catch (error) {
      throw this.failure(`fetching the ruleset failed: ${error instanceof Error ? error.message : String(error)}`, initial, false);
    }
    if (res.status === 304 && this.prepared) {
      this.counts.notModified++;
      this.recovered();
      return false;
    }
    if (res.status !== 200) throw this.failure(await describeFailure(res, "GET /api/v1/flags/ruleset"), initial, res.status === 401 || res.status === 403);
    let ruleset: Ruleset;
    try {
      ruleset = ((await res.json()) as { data: Ruleset }).data;
      if (!ruleset || typeof ruleset.flags !== "object" || typeof ruleset.segments !== "object") throw new Error("no ruleset in the answer");
    } catch (error) {
      throw this.failure(`the ruleset could not be read: ${error instanceof Error ? error.message : String(error)}`, initial, false);
    }
    this.counts.fetched++;
    const before = this.prepared?.ruleset ?? null;
    this.prepared = prepareRuleset(ruleset);
    this.etag = res.headers.get("etag");
    this.recovered();
    if (!initial && before) {
      const flagsChanged = changedFlags(before, ruleset);
      this.events.emit(ProviderEvents.ConfigurationChanged, { flagsChanged, metadata: { version: ruleset.version } });
    }
    return true;
  }

  private failure(message: string, initial: boolean, fatal: boolean): Error {
    this.counts.failed++;
    if (initial) return fatal ? new ProviderFatalError(message) : new Error(message);
    if (!this.stale) {
      this.stale = true;
      this.events.emit(ProviderEvents.Stale, { message });
    }
    return new Error(message);
  }

  private recovered(): void {
    if (!this.stale) return;
    this.stale = false;
    this.events.emit(ProviderEvents.Ready, { message: "the ruleset is current again" });
  }

  private resolve<T extends boolean | string | number | JsonValue>(
    key: string,
    kind: FlagKind,
    defaultValue: T,
    context: EvaluationContext,
  ): ResolutionDetails<T> {
    const prepared = this.prepared;
    if (!prepared) return failed(defaultValue, "PROVIDER_NOT_READY", "the ruleset has not been fetched yet");
    const ctx = contextJson(context);
    const evaluation = evaluateFlag(prepared, key, ctx);
    if (evaluation.error_code === "FLAG_NOT_FOUND") return failed(defaultValue, "FLAG_NOT_FOUND", `flag ${key} not found in ${prepared.ruleset.environment}`);
    // As OFREP answers: a rollout by the context's key cannot place a context without one.
    if (evaluation.bucket_missing === "key" && contextKey(ctx) === undefined) {
      return failed(defaultValue, "TARGETING_KEY_MISSING", `flag ${key} is a rollout by the context's key: set targetingKey`);
    }
    return resolved(key, kind, defaultValue, evaluation);
  }

  async resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, context: EvaluationContext, _logger?: Logger): Promise<ResolutionDetails<boolean>> {
    return this.resolve(flagKey, "boolean", defaultValue, context);
  }

  async resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext, _logger?: Logger): Promise<ResolutionDetails<string>> {
    return this.resolve(flagKey, "string", defaultValue, context);
  }

  async resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext, _logger?: Logger): Promise<ResolutionDetails<number>> {
    return this.resolve(flagKey, "number", defaultValue, context);
  }

  async resolveObjectEvaluation<T extends JsonValue>(
    flagKey: string,
    defaultValue: T,
    context: EvaluationContext,
    _logger?: Logger,
  ): Promise<ResolutionDetails<T>> {
    return this.resolve(flagKey, "object", defaultValue, context);
  }
}
