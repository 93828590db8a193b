// The one evaluation of feature flags (NAMED-PRODUCTS.md "Feature flags", Evaluation): pure and
// synchronous, no I/O and no imports but the pure sha1, so the server endpoints, the client
// endpoints, OFREP and the OpenFeature provider (clients/openfeature) all run this very file and a
// context gets one answer from every path. Checked against test/products/flags/vectors.json.
//
// Where the contract is silent, LaunchDarkly's evaluator decides: a clause on an attribute the
// context lacks never matches (negated ops included); an array attribute matches when any element
// does; `lt`…`gte` compare numbers only; semver accepts `1`, `1.2` and `1.2.3-pre+build`.
import { sha1Hex } from "./sha1";

export type FlagType = "boolean" | "string" | "number" | "json";
export type ClauseOp =
  | "in"
  | "not_in"
  | "contains"
  | "starts_with"
  | "ends_with"
  | "lt"
  | "lte"
  | "gt"
  | "gte"
  | "semver_lt"
  | "semver_eq"
  | "semver_gt"
  | "in_segment";

export interface Clause {
  attribute: string;
  op: ClauseOp;
  values: Array<string | number | boolean>;
}

export interface Rollout {
  /** Context attribute hashed into the bucket; `key` when absent. */
  bucket_by?: string;
  variations: Array<{ variant: string; weight: number }>;
}

export type Serve = { variant: string } | { rollout: Rollout };

export interface Rule {
  id: string;
  /** What the rule is for, in the team's words (never evaluated). */
  description?: string;
  clauses: Clause[];
  serve: Serve;
}

export interface EnvironmentConfig {
  enabled: boolean;
  rules: Rule[];
  fallthrough: Serve;
}

/** A flag as one environment's ruleset holds it. */
export interface RulesetFlag {
  key: string;
  type: FlagType;
  variants: Record<string, unknown>;
  off_variant: string;
  salt: string;
  version: number;
  client_side: boolean;
  /** This environment's configuration (absent: the flag is off here). */
  config?: EnvironmentConfig;
}

export interface RulesetSegment {
  key: string;
  included: string[];
  excluded: string[];
  rules: Array<{ id?: string; clauses: Clause[] }>;
}

/** An environment's whole ruleset, as GET /flags/ruleset serves it. */
export interface Ruleset {
  environment: string;
  version: number;
  flags: Record<string, RulesetFlag>;
  segments: Record<string, RulesetSegment>;
}

export type Reason = "DISABLED" | "TARGETING_MATCH" | "SPLIT" | "DEFAULT" | "ERROR";

export interface Evaluation {
  value: unknown;
  variant: string | null;
  reason: Reason;
  version: number | null;
  error_code?: "FLAG_NOT_FOUND";
  /** The rule that served, for TARGETING_MATCH and a rule's SPLIT. */
  rule_id?: string;
  /**
   * The served rollout's `bucket_by` attribute was missing from the context (the first variation
   * with weight was served); OFREP answers TARGETING_KEY_MISSING when it is `key`.
   */
  bucket_missing?: string;
}

export type Context = Record<string, unknown>;

/** Weights of a rollout sum to this. */
export const WEIGHT_TOTAL = 100_000;
/** 0xFFFFFFFFFFFFFFF as JavaScript reads it (a double: 2^60), the contract's divisor. */
const BUCKET_SCALE = Number.parseInt("fffffffffffffff", 16);

/** A clause, rule, serve and flag in one fixed shape each, so the evaluator's property reads stay monomorphic (fast) whatever shapes the JSON had. */
interface PreparedClause {
  attribute: string;
  op: ClauseOp;
  values: Array<string | number | boolean>;
}
interface PreparedServe {
  variant: string | null;
  rollout: Rollout | null;
}
interface PreparedRule {
  id: string | undefined;
  clauses: PreparedClause[];
  serve: PreparedServe;
}
export interface PreparedFlag {
  flag: RulesetFlag;
  enabled: boolean;
  rules: PreparedRule[];
  fallthrough: PreparedServe;
}

/** A ruleset made ready for evaluating many contexts (built once per ruleset version). */
export interface PreparedRuleset {
  ruleset: Ruleset;
  /** The flag keys, sorted (the order of a bulk answer). */
  keys: string[];
  flags: Map<string, PreparedFlag>;
  segments: Map<string, { included: Set<string>; excluded: Set<string>; rules: PreparedRule[] }>;
}

const prepareClause = (c: Clause): PreparedClause => ({ attribute: c.attribute, op: c.op, values: c.values });
const prepareServe = (s: Serve): PreparedServe =>
  "variant" in s
    ? { variant: s.variant, rollout: null }
    : { variant: null, rollout: { bucket_by: s.rollout.bucket_by ?? "key", variations: s.rollout.variations } };
const NO_SERVE: PreparedServe = { variant: null, rollout: null };
const prepareRule = (r: { id?: string; clauses: Clause[]; serve?: Serve }): PreparedRule => ({
  id: r.id,
  clauses: r.clauses.map(prepareClause),
  serve: r.serve ? prepareServe(r.serve) : NO_SERVE,
});

export function prepareRuleset(ruleset: Ruleset): PreparedRuleset {
  const segments: PreparedRuleset["segments"] = new Map();
  for (const [key, s] of Object.entries(ruleset.segments)) {
    segments.set(key, { included: new Set(s.included), excluded: new Set(s.excluded), rules: s.rules.map(prepareRule) });
  }
  const flags: PreparedRuleset["flags"] = new Map();
  for (const [key, flag] of Object.entries(ruleset.flags)) {
    const config = flag.config;
    flags.set(key, {
      flag,
      enabled: config?.enabled === true,
      rules: config ? config.rules.map(prepareRule) : [],
      fallthrough: config ? prepareServe(config.fallthrough) : NO_SERVE,
    });
  }
  return { ruleset, keys: Object.keys(ruleset.flags).sort(), flags, segments };
}

/** The context's key: `key`, else `targetingKey` (the same field everywhere); only a string counts. */
export function contextKey(context: Context): string | undefined {
  const key = context.key ?? context.targetingKey;
  return typeof key === "string" ? key : undefined;
}

function attributeOf(context: Context, attribute: string): unknown {
  if (attribute === "key" || attribute === "targetingKey") return contextKey(context);
  return Object.hasOwn(context, attribute) ? context[attribute] : undefined;
}

/** The bucket of `value` for a flag: sha1 of `flag_key.salt.value`, its first 15 hex digits over 0xFFFFFFFFFFFFFFF. */
export function bucketOf(flagKey: string, salt: string, value: string): number {
  const h = sha1Hex(`${flagKey}.${salt}.${value}`);
  return Number.parseInt(h.slice(0, 15), 16) / BUCKET_SCALE;
}

/** A `bucket_by` value as hashed: a string as is, an integer in decimal; anything else is missing. */
export function bucketValue(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isInteger(value)) return String(value);
  return undefined;
}

/** The variation of a rollout for a context, and the attribute that was missing when it was. */
function rolloutVariant(flag: Pick<RulesetFlag, "key" | "salt">, rollout: Rollout, context: Context): { variant: string; missing?: string } {
  const bucketBy = rollout.bucket_by ?? "key";
  const value = bucketValue(attributeOf(context, bucketBy));
  const variations = rollout.variations;
  if (value === undefined) {
    const first = variations.find((v) => v.weight > 0) ?? variations[0];
    return { variant: first.variant, missing: bucketBy };
  }
  const bucket = bucketOf(flag.key, flag.salt, value);
  let total = 0;
  for (const v of variations) {
    total += v.weight / WEIGHT_TOTAL;
    if (total > bucket) return { variant: v.variant };
  }
  return { variant: variations[variations.length - 1].variant };
}

interface SemVer {
  parts: [number, number, number];
  pre: string[];
}

const SEMVER = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** Versions parsed lately (clause values repeat on every evaluation); bounded, cleared when full. */
const parsedVersions = new Map<string, SemVer | null>();

export function parseSemver(text: unknown): SemVer | null {
  if (typeof text !== "string") return null;
  const known = parsedVersions.get(text);
  if (known !== undefined) return known;
  const m = SEMVER.exec(text);
  const parsed: SemVer | null = m ? { parts: [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)], pre: m[4] ? m[4].split(".") : [] } : null;
  if (parsedVersions.size >= 1000) parsedVersions.clear();
  parsedVersions.set(text, parsed);
  return parsed;
}

/** Semantic Versioning 2.0.0 precedence (build metadata ignored). */
export function compareSemver(a: SemVer, b: SemVer): number {
  for (let i = 0; i < 3; i++) if (a.parts[i] !== b.parts[i]) return a.parts[i] < b.parts[i] ? -1 : 1;
  // A release outranks its pre-releases.
  if (a.pre.length === 0 && b.pre.length === 0) return 0;
  if (a.pre.length === 0) return 1;
  if (b.pre.length === 0) return -1;
  for (let i = 0; i < Math.max(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i];
    const y = b.pre[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    if (xn && yn) return Number(x) < Number(y) ? -1 : 1;
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/** Whether one attribute value (never an array) matches one clause value under `op`. */
function matchOne(op: ClauseOp, actual: unknown, expected: unknown): boolean {
  switch (op) {
    case "in":
    case "not_in":
      return actual === expected;
    case "contains":
      return typeof actual === "string" && typeof expected === "string" && actual.includes(expected);
    case "starts_with":
      return typeof actual === "string" && typeof expected === "string" && actual.startsWith(expected);
    case "ends_with":
      return typeof actual === "string" && typeof expected === "string" && actual.endsWith(expected);
    case "lt":
      return typeof actual === "number" && typeof expected === "number" && actual < expected;
    case "lte":
      return typeof actual === "number" && typeof expected === "number" && actual <= expected;
    case "gt":
      return typeof actual === "number" && typeof expected === "number" && actual > expected;
    case "gte":
      return typeof actual === "number" && typeof expected === "number" && actual >= expected;
    case "semver_lt":
    case "semver_eq":
    case "semver_gt": {
      const a = parseSemver(actual);
      const b = parseSemver(expected);
      if (!a || !b) return false;
      const order = compareSemver(a, b);
      return op === "semver_lt" ? order < 0 : op === "semver_eq" ? order === 0 : order > 0;
    }
    default:
      return false;
  }
}

function segmentMatches(prepared: PreparedRuleset, segmentKey: unknown, context: Context): boolean {
  if (typeof segmentKey !== "string") return false;
  const segment = prepared.segments.get(segmentKey);
  if (!segment) return false;
  const key = contextKey(context);
  if (key !== undefined) {
    if (segment.excluded.has(key)) return false;
    if (segment.included.has(key)) return true;
  }
  for (const rule of segment.rules) if (ruleMatches(prepared, rule, context)) return true;
  return false;
}

function anyValueMatches(op: ClauseOp, actual: unknown, values: unknown[]): boolean {
  for (const expected of values) if (matchOne(op, actual, expected)) return true;
  return false;
}

function clauseMatches(prepared: PreparedRuleset, clause: PreparedClause, context: Context): boolean {
  const op = clause.op;
  if (op === "in_segment") {
    for (const segmentKey of clause.values) if (segmentMatches(prepared, segmentKey, context)) return true;
    return false;
  }
  const actual = attributeOf(context, clause.attribute);
  if (actual === undefined || actual === null) return false;
  let any = false;
  if (Array.isArray(actual)) {
    for (const value of actual) if (anyValueMatches(op, value, clause.values)) any = true;
  } else any = anyValueMatches(op, actual, clause.values);
  return op === "not_in" ? !any : any;
}

const NOT_FOUND: Evaluation = Object.freeze({ value: null, variant: null, reason: "ERROR", version: null, error_code: "FLAG_NOT_FOUND" }) as Evaluation;

function served(flag: RulesetFlag, variant: string, reason: Reason, ruleId: string | undefined, missing: string | undefined): Evaluation {
  const value = Object.hasOwn(flag.variants, variant) ? flag.variants[variant] : null;
  const out: Evaluation = { value, variant, reason, version: flag.version };
  if (ruleId !== undefined) out.rule_id = ruleId;
  if (missing !== undefined) out.bucket_missing = missing;
  return out;
}

function serve(flag: RulesetFlag, what: PreparedServe, context: Context, matchReason: Reason, ruleId: string | undefined): Evaluation {
  if (what.rollout === null) return served(flag, what.variant ?? flag.off_variant, matchReason, ruleId, undefined);
  const { variant, missing } = rolloutVariant(flag, what.rollout, context);
  return served(flag, variant, "SPLIT", ruleId, missing);
}

function ruleMatches(prepared: PreparedRuleset, rule: PreparedRule, context: Context): boolean {
  for (const clause of rule.clauses) if (!clauseMatches(prepared, clause, context)) return false;
  return true;
}

/**
 * The evaluation of flag `key` for a context in a prepared ruleset: FLAG_NOT_FOUND when the ruleset
 * has no such flag or `include` refuses it (a client key sees client-side flags only).
 */
export function evaluateFlag(prepared: PreparedRuleset, key: string, context: Context, include?: (flag: RulesetFlag) => boolean): Evaluation {
  const p = prepared.flags.get(key);
  if (!p || (include && !include(p.flag))) return { ...NOT_FOUND };
  const flag = p.flag;
  if (!p.enabled) return served(flag, flag.off_variant, "DISABLED", undefined, undefined);
  for (const rule of p.rules) if (ruleMatches(prepared, rule, context)) return serve(flag, rule.serve, context, "TARGETING_MATCH", rule.id);
  return serve(flag, p.fallthrough, context, "DEFAULT", undefined);
}

/** Evaluates `keys` (default: every flag of the ruleset that `include` accepts) for a context. */
export function evaluateAll(
  prepared: PreparedRuleset,
  context: Context,
  keys?: readonly string[],
  include?: (flag: RulesetFlag) => boolean,
): Record<string, Evaluation> {
  const out: Record<string, Evaluation> = {};
  if (keys) {
    for (const key of keys)
      Object.defineProperty(out, key, { value: evaluateFlag(prepared, key, context, include), enumerable: true, writable: true, configurable: true });
    return out;
  }
  for (const key of prepared.keys) {
    if (include && !include(prepared.flags.get(key)!.flag)) continue;
    out[key] = evaluateFlag(prepared, key, context);
  }
  return out;
}
