// Request and response schemas of the flags product (zod, documented in the OpenAPI document), and
// its size limits (README "Limits"): every list a caller stores is capped, and a list past its cap
// answers 422 naming it (`{details: {"environments.production.rules.0.clauses": ["has more than 30 clauses"]}}`).
import { z } from "@hono/zod-openapi";

export const LIMITS = {
  environments: 10,
  rules: 100,
  clauses: 30,
  clauseValues: 1_000,
  variants: 50,
  variations: 50,
  tags: 20,
  segmentKeys: 10_000,
  segmentRules: 50,
  /** UTF-8 bytes of a flag's variants' JSON, together. */
  variantBytes: 64 * 1024,
  /** UTF-8 bytes of one flag's or one segment's stored JSON. */
  flagBytes: 256 * 1024,
  segmentBytes: 1024 * 1024,
  /** UTF-8 bytes of every flag and segment of a team together: the largest ruleset an environment can have. */
  rulesetBytes: 4 * 1024 * 1024,
  /** Pending scheduled changes per flag. */
  scheduled: 50,
  /** Events per track call. */
  trackEvents: 100,
} as const;

/** Keys the API's own paths use under /flags: never a flag's key. */
export const RESERVED_KEYS = ["evaluate", "bootstrap", "track", "ruleset", "segments", "environments", "client"] as const;
export const KEY_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const KEY_MESSAGE = "must match ^[a-z0-9][a-z0-9._-]{0,63}$ (lowercase letters, digits, '.', '_', '-'; 1 to 64 characters)";

const maxItems = (max: number, what: string) => `has more than ${max} ${what}`;

export const FlagKey = z
  .string()
  .regex(KEY_PATTERN, KEY_MESSAGE)
  .refine((key) => !(RESERVED_KEYS as readonly string[]).includes(key), `is reserved (${RESERVED_KEYS.join(", ")})`);
export const EnvKey = z.string().regex(KEY_PATTERN, KEY_MESSAGE);
export const SegmentKey = FlagKey;
const VariantName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "must be 1 to 64 letters, digits, '.', '_' or '-'");
const ContextKey = z.string().min(1, "can't be blank").max(256, "must be at most 256 characters");

export const OPS = [
  "in",
  "not_in",
  "contains",
  "starts_with",
  "ends_with",
  "lt",
  "lte",
  "gt",
  "gte",
  "semver_lt",
  "semver_eq",
  "semver_gt",
  "in_segment",
] as const;

const ClauseValue = z.union([z.string().max(1024, "must be at most 1024 characters"), z.number(), z.boolean()]);

export const ClauseSchema = z
  .strictObject({
    attribute: z.string().min(1, "can't be blank").max(256, "must be at most 256 characters"),
    op: z.enum(OPS),
    values: z.array(ClauseValue).min(1, "must have at least one value").max(LIMITS.clauseValues, maxItems(LIMITS.clauseValues, "values")),
  })
  .openapi("FlagClause", { description: "Matches when the context attribute matches any of `values` (`not_in`: none); `in_segment` takes segment keys." });

const Clauses = z.array(ClauseSchema).max(LIMITS.clauses, maxItems(LIMITS.clauses, "clauses"));

export const RolloutSchema = z
  .strictObject({
    bucket_by: z.string().min(1).max(256).optional(),
    variations: z
      .array(z.strictObject({ variant: VariantName, weight: z.number().int().min(0).max(100_000) }))
      .min(1, "must have at least one variation")
      .max(LIMITS.variations, maxItems(LIMITS.variations, "variations"))
      .refine((vs) => vs.reduce((sum, v) => sum + v.weight, 0) === 100_000, "weights must sum to 100000"),
  })
  .openapi("FlagRollout");

export const ServeSchema = z
  .union([z.strictObject({ variant: VariantName }), z.strictObject({ rollout: RolloutSchema })])
  .openapi("FlagServe", { description: "`{variant}` or `{rollout: {bucket_by, variations: [{variant, weight}]}}` (weights sum to 100000)." });

export const RuleSchema = z
  .strictObject({
    id: z.string().min(1).max(64).optional(),
    description: z.string().max(500).optional(),
    clauses: Clauses,
    serve: ServeSchema,
  })
  .openapi("FlagRule");

const Rules = z.array(RuleSchema).max(LIMITS.rules, maxItems(LIMITS.rules, "rules"));

/** One environment's configuration in a request: each field optional (PATCH merges; create fills defaults). */
export const EnvironmentConfigInput = z.strictObject({
  enabled: z.boolean().optional(),
  rules: Rules.optional(),
  fallthrough: ServeSchema.optional(),
});

const Tags = z.array(z.string().min(1).max(64, "must be at most 64 characters")).max(LIMITS.tags, maxItems(LIMITS.tags, "tags"));
const Variants = z
  .record(VariantName, z.unknown())
  .refine((v) => Object.keys(v).length >= 1, "must have at least one variant")
  .refine((v) => Object.keys(v).length <= LIMITS.variants, maxItems(LIMITS.variants, "variants"));
const EnvConfigs = z.record(EnvKey, EnvironmentConfigInput);

export const CreateFlagSchema = z
  .strictObject({
    key: FlagKey,
    name: z.string().trim().min(1, "can't be blank").max(200, "must be at most 200 characters").optional(),
    description: z.string().max(2000, "must be at most 2000 characters").optional(),
    type: z.enum(["boolean", "string", "number", "json"]).optional(),
    variants: Variants.optional(),
    off_variant: VariantName.optional(),
    client_side: z.boolean().optional(),
    tags: Tags.optional(),
    environments: EnvConfigs.optional(),
  })
  .openapi("CreateFlag");

export const UpdateFlagSchema = z
  .strictObject({
    name: z.string().trim().min(1, "can't be blank").max(200, "must be at most 200 characters").optional(),
    description: z.string().max(2000, "must be at most 2000 characters").optional(),
    variants: Variants.optional(),
    off_variant: VariantName.optional(),
    client_side: z.boolean().optional(),
    tags: Tags.optional(),
    environments: EnvConfigs.optional(),
  })
  .openapi("UpdateFlag");

export type CreateFlagInput = z.infer<typeof CreateFlagSchema>;
export type UpdateFlagInput = z.infer<typeof UpdateFlagSchema>;

const EnvironmentConfigSchema = z.object({ enabled: z.boolean(), rules: z.array(RuleSchema), fallthrough: ServeSchema }).openapi("FlagEnvironmentConfig");

export const FlagSchema = z
  .object({
    key: z.string(),
    name: z.string(),
    description: z.string(),
    type: z.enum(["boolean", "string", "number", "json"]),
    variants: z.record(z.string(), z.unknown()),
    off_variant: z.string(),
    client_side: z.boolean(),
    tags: z.array(z.string()),
    salt: z.string(),
    version: z.number().int(),
    environments: z.record(z.string(), EnvironmentConfigSchema),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Flag");

const SegmentRuleSchema = z.strictObject({ id: z.string().min(1).max(64).optional(), clauses: Clauses }).openapi("SegmentRule");
const SegmentKeys = z.array(ContextKey).max(LIMITS.segmentKeys, maxItems(LIMITS.segmentKeys, "context keys"));
const SegmentRules = z.array(SegmentRuleSchema).max(LIMITS.segmentRules, maxItems(LIMITS.segmentRules, "rules"));

export const CreateSegmentSchema = z
  .strictObject({
    key: SegmentKey,
    name: z.string().trim().min(1, "can't be blank").max(200, "must be at most 200 characters").optional(),
    description: z.string().max(2000).optional(),
    included: SegmentKeys.optional(),
    excluded: SegmentKeys.optional(),
    rules: SegmentRules.optional(),
  })
  .openapi("CreateSegment");

export const UpdateSegmentSchema = z
  .strictObject({
    name: z.string().trim().min(1, "can't be blank").max(200, "must be at most 200 characters").optional(),
    description: z.string().max(2000).optional(),
    included: SegmentKeys.optional(),
    excluded: SegmentKeys.optional(),
    rules: SegmentRules.optional(),
  })
  .openapi("UpdateSegment");

export type CreateSegmentInput = z.infer<typeof CreateSegmentSchema>;
export type UpdateSegmentInput = z.infer<typeof UpdateSegmentSchema>;

export const SegmentSchema = z
  .object({
    key: z.string(),
    name: z.string(),
    description: z.string(),
    included: z.array(z.string()),
    excluded: z.array(z.string()),
    rules: z.array(SegmentRuleSchema),
    version: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Segment");

export const CreateEnvironmentSchema = z
  .strictObject({ key: EnvKey, name: z.string().trim().min(1, "can't be blank").max(200).optional() })
  .openapi("CreateFlagEnvironment");
export const EnvironmentSchema = z.object({ key: z.string(), name: z.string(), created_at: z.string() }).openapi("FlagEnvironment");

export const ActorSchema = z
  .object({ type: z.enum(["key", "user", "schedule"]), id: z.string(), label: z.string() })
  .openapi("FlagActor", { description: "Who made a change: a team API key (its prefix), a console user (their email) or a scheduled change." });
export type Actor = z.infer<typeof ActorSchema>;
