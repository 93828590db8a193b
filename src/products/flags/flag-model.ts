// The flag and segment model, pure: defaults of a new flag, how a PATCH merges, the checks that need
// the team's environments and segments (run inside the team's store, in the transaction that writes),
// what changed between two versions, and the ruleset form of a flag. No I/O.
import type { FieldErrors } from "../../platform/errors";
import { utf8Length } from "../../platform/sizes";
import type { EnvironmentConfig, FlagType, Rule, RulesetFlag, Serve } from "./evaluate";
import { type CreateFlagInput, type CreateSegmentInput, LIMITS, type UpdateFlagInput, type UpdateSegmentInput } from "./flags.schemas";

export interface Flag {
  key: string;
  name: string;
  description: string;
  type: FlagType;
  variants: Record<string, unknown>;
  off_variant: string;
  client_side: boolean;
  tags: string[];
  salt: string;
  version: number;
  /** Configured environments; an environment absent here is off and serves off_variant (withEnvironments fills it). */
  environments: Record<string, EnvironmentConfig>;
  created_at: string;
  updated_at: string;
}

export interface Segment {
  key: string;
  name: string;
  description: string;
  included: string[];
  excluded: string[];
  rules: Array<{ id?: string; clauses: Rule["clauses"] }>;
  version: number;
  created_at: string;
  updated_at: string;
}

/** LaunchDarkly's default of a new boolean flag: `{on: true, off: false}`, off serves `off`, on serves `on`. */
const BOOLEAN_VARIANTS = { on: true, off: false };

/** An environment a flag has no configuration for: off, serving off_variant; when turned on, the fallthrough. */
export function defaultConfig(flag: Pick<Flag, "type" | "variants" | "off_variant">): EnvironmentConfig {
  const first = flag.type === "boolean" && Object.hasOwn(flag.variants, "on") ? "on" : Object.keys(flag.variants)[0];
  return { enabled: false, rules: [], fallthrough: { variant: first } };
}

const newRuleId = () => crypto.randomUUID().slice(0, 8);

function withRuleIds(rules: Array<Omit<Rule, "id"> & { id?: string }>): Rule[] {
  return rules.map((rule) => ({ ...rule, id: rule.id ?? newRuleId() }));
}

function mergeConfig(
  base: EnvironmentConfig,
  input: { enabled?: boolean; rules?: Array<Omit<Rule, "id"> & { id?: string }>; fallthrough?: Serve },
): EnvironmentConfig {
  return {
    enabled: input.enabled ?? base.enabled,
    rules: input.rules ? withRuleIds(input.rules) : base.rules,
    fallthrough: input.fallthrough ?? base.fallthrough,
  };
}

/** A new flag from a create body (defaults filled; checkFlag validates it). */
export function newFlag(input: CreateFlagInput, salt: string, at: string): Flag {
  const type = input.type ?? "boolean";
  const variants = input.variants ?? (type === "boolean" ? { ...BOOLEAN_VARIANTS } : {});
  const names = Object.keys(variants);
  const off_variant = input.off_variant ?? (type === "boolean" && Object.hasOwn(variants, "off") ? "off" : (names[0] ?? ""));
  const flag: Flag = {
    key: input.key,
    name: input.name ?? input.key,
    description: input.description ?? "",
    type,
    variants,
    off_variant,
    client_side: input.client_side ?? false,
    tags: input.tags ?? [],
    salt,
    version: 1,
    environments: {},
    created_at: at,
    updated_at: at,
  };
  for (const [env, config] of Object.entries(input.environments ?? {})) flag.environments[env] = mergeConfig(defaultConfig(flag), config);
  return flag;
}

/** The flag after a PATCH: given fields replace, environments merge per environment and field. Version and times are the store's. */
export function patchFlag(flag: Flag, patch: UpdateFlagInput): Flag {
  const next: Flag = { ...flag, environments: { ...flag.environments } };
  if (patch.name !== undefined) next.name = patch.name;
  if (patch.description !== undefined) next.description = patch.description;
  if (patch.variants !== undefined) next.variants = patch.variants;
  if (patch.off_variant !== undefined) next.off_variant = patch.off_variant;
  if (patch.client_side !== undefined) next.client_side = patch.client_side;
  if (patch.tags !== undefined) next.tags = patch.tags;
  for (const [env, config] of Object.entries(patch.environments ?? {})) {
    next.environments[env] = mergeConfig(flag.environments[env] ?? defaultConfig(next), config);
  }
  return next;
}

/** The flag with every environment of the team present (defaults for the unconfigured ones). */
export function withEnvironments(flag: Flag, environments: readonly string[]): Flag {
  const all: Record<string, EnvironmentConfig> = {};
  for (const env of environments) all[env] = flag.environments[env] ?? defaultConfig(flag);
  return { ...flag, environments: all };
}

function valueFits(type: FlagType, value: unknown): boolean {
  if (type === "boolean") return typeof value === "boolean";
  if (type === "string") return typeof value === "string";
  if (type === "number") return typeof value === "number" && Number.isFinite(value);
  return value !== undefined;
}

/** Keys of the segments a flag's rules name. */
export function segmentsUsed(flag: Pick<Flag, "environments">): Set<string> {
  const used = new Set<string>();
  for (const config of Object.values(flag.environments)) {
    for (const rule of config.rules) for (const clause of rule.clauses) if (clause.op === "in_segment") for (const v of clause.values) used.add(String(v));
  }
  return used;
}

/**
 * What is wrong with a flag given the team's environments and segments, by field path; empty when
 * nothing is. Sizes are checked here too, so a 422 names the part that is too large.
 */
export function checkFlag(flag: Flag, environments: ReadonlySet<string>, segments: ReadonlySet<string>): FieldErrors {
  const errors: FieldErrors = {};
  const add = (path: string, message: string) => (errors[path] ??= []).push(message);
  const variants = Object.keys(flag.variants);
  if (variants.length === 0) add("variants", "must have at least one variant");
  if (flag.type === "boolean" && variants.length > 2) add("variants", "a boolean flag has at most two variants");
  for (const [name, value] of Object.entries(flag.variants)) if (!valueFits(flag.type, value)) add(`variants.${name}`, `must be a ${flag.type}`);
  if (utf8Length(JSON.stringify(flag.variants)) > LIMITS.variantBytes) add("variants", `are larger than ${LIMITS.variantBytes / 1024} KB of JSON`);
  const isVariant = (v: string) => Object.hasOwn(flag.variants, v);
  if (!isVariant(flag.off_variant)) add("off_variant", "must name one of the variants");
  const checkServe = (path: string, serve: Serve) => {
    if ("variant" in serve) {
      if (!isVariant(serve.variant)) add(`${path}.variant`, "must name one of the variants");
    } else {
      serve.rollout.variations.forEach((v, i) => {
        if (!isVariant(v.variant)) add(`${path}.rollout.variations.${i}.variant`, "must name one of the variants");
      });
    }
  };
  for (const [env, config] of Object.entries(flag.environments)) {
    const at = `environments.${env}`;
    if (!environments.has(env)) {
      add(at, "is not an environment of the team");
      continue;
    }
    const ids = new Set<string>();
    config.rules.forEach((rule, i) => {
      if (ids.has(rule.id)) add(`${at}.rules.${i}.id`, "is used by another rule");
      ids.add(rule.id);
      checkServe(`${at}.rules.${i}.serve`, rule.serve);
      rule.clauses.forEach((clause, j) => {
        if (clause.op !== "in_segment") return;
        for (const v of clause.values)
          if (typeof v !== "string" || !segments.has(v)) add(`${at}.rules.${i}.clauses.${j}.values`, `names no segment of the team: ${String(v)}`);
      });
    });
    checkServe(`${at}.fallthrough`, config.fallthrough);
  }
  if (Object.keys(errors).length === 0 && utf8Length(JSON.stringify(flag)) > LIMITS.flagBytes)
    add("flag", `is larger than ${LIMITS.flagBytes / 1024} KB of JSON`);
  return errors;
}

export function newSegment(input: CreateSegmentInput, at: string): Segment {
  return {
    key: input.key,
    name: input.name ?? input.key,
    description: input.description ?? "",
    included: input.included ?? [],
    excluded: input.excluded ?? [],
    rules: (input.rules ?? []).map((rule) => ({ ...rule, id: rule.id ?? newRuleId() })),
    version: 1,
    created_at: at,
    updated_at: at,
  };
}

export function patchSegment(segment: Segment, patch: UpdateSegmentInput): Segment {
  return {
    ...segment,
    ...(patch.name !== undefined && { name: patch.name }),
    ...(patch.description !== undefined && { description: patch.description }),
    ...(patch.included !== undefined && { included: patch.included }),
    ...(patch.excluded !== undefined && { excluded: patch.excluded }),
    ...(patch.rules !== undefined && { rules: patch.rules.map((rule) => ({ ...rule, id: rule.id ?? newRuleId() })) }),
  };
}

/** A segment's rules may not name segments (no cycles, one level as LaunchDarkly's big segments); sizes. */
export function checkSegment(segment: Segment): FieldErrors {
  const errors: FieldErrors = {};
  segment.rules.forEach((rule, i) => {
    rule.clauses.forEach((clause, j) => {
      if (clause.op !== "in_segment") return;
      errors[`rules.${i}.clauses.${j}.op`] ??= [];
      errors[`rules.${i}.clauses.${j}.op`].push("a segment's rules cannot name segments");
    });
  });
  if (Object.keys(errors).length === 0 && utf8Length(JSON.stringify(segment)) > LIMITS.segmentBytes)
    errors.segment = [`is larger than ${LIMITS.segmentBytes / 1024} KB of JSON`];
  return errors;
}

/** The fields a change touched: top-level names, and `environments.<env>.<field>` inside environments. */
export function changedFields(before: Flag | null, after: Flag | null): string[] {
  if (!before || !after) return [before ? "deleted" : "created"];
  const changed: string[] = [];
  for (const field of ["name", "description", "variants", "off_variant", "client_side", "tags"] as const) {
    if (JSON.stringify(before[field]) !== JSON.stringify(after[field])) changed.push(field);
  }
  const envs = new Set([...Object.keys(before.environments), ...Object.keys(after.environments)]);
  for (const env of [...envs].sort()) {
    const a = before.environments[env] ?? defaultConfig(before);
    const b = after.environments[env] ?? defaultConfig(after);
    for (const field of ["enabled", "rules", "fallthrough"] as const) {
      if (JSON.stringify(a[field]) !== JSON.stringify(b[field])) changed.push(`environments.${env}.${field}`);
    }
  }
  return changed;
}

/** A flag as an environment's ruleset holds it. */
export function rulesetFlag(flag: Flag, env: string): RulesetFlag {
  const config = flag.environments[env];
  const out: RulesetFlag = {
    key: flag.key,
    type: flag.type,
    variants: flag.variants,
    off_variant: flag.off_variant,
    salt: flag.salt,
    version: flag.version,
    client_side: flag.client_side,
  };
  if (config) out.config = config;
  return out;
}

/** Whether an environment's configuration can serve only one variant to everyone (for the stale list). */
export function servesOneVariant(flag: Flag, env: string): boolean {
  const config = flag.environments[env];
  if (!config || !config.enabled) return true;
  const served = new Set<string>();
  const add = (serve: Serve) => {
    if ("variant" in serve) served.add(serve.variant);
    else for (const v of serve.rollout.variations) if (v.weight > 0) served.add(v.variant);
  };
  for (const rule of config.rules) add(rule.serve);
  add(config.fallthrough);
  return served.size <= 1;
}
