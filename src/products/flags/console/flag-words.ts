// Targeting in words for the console: a clause, a rule, a serve and a rollout's shares as people
// read them ("If country is one of DE, FR → on", "Otherwise: 20% on, 80% off by key"), and the
// parsing of the shares a rollout form posts (percent, to the contract's integer weights summing
// to 100000). Pure functions, no I/O.
import type { Clause, ClauseOp, Rollout, Rule, Serve } from "../evaluate";

/** A rollout's total: weights are integers summing to this (NAMED-PRODUCTS.md). */
export const WEIGHT_TOTAL = 100_000;

const OP_WORDS: Record<ClauseOp, string> = {
  in: "is one of",
  not_in: "is not one of",
  contains: "contains",
  starts_with: "starts with",
  ends_with: "ends with",
  lt: "is less than",
  lte: "is at most",
  gt: "is greater than",
  gte: "is at least",
  semver_lt: "is a version before",
  semver_eq: "is version",
  semver_gt: "is a version after",
  in_segment: "is in segment",
};

/** The operators with their words, in the order a form offers them. */
export const OP_CHOICES = Object.entries(OP_WORDS) as Array<[ClauseOp, string]>;

const list = (values: Clause["values"]) => values.map((v) => String(v)).join(", ");

/** One clause: "country is one of DE, FR"; a segment clause: "Users in segment beta". */
export function clauseText(clause: Clause): string {
  if (clause.op === "in_segment") return `Users in segment ${list(clause.values)}`;
  const words = clause.values.length === 1 && clause.op === "in" ? "is" : clause.op === "not_in" && clause.values.length === 1 ? "is not" : OP_WORDS[clause.op];
  return `${clause.attribute} ${words} ${list(clause.values)}`;
}

/** A weight as a percent people read: 20000 → "20%", 33333 → "33.333%". */
export function percentText(weight: number): string {
  return `${Number(((weight / WEIGHT_TOTAL) * 100).toFixed(3))}%`;
}

/** A rollout's shares: "20% on, 80% off by key". */
export function rolloutText(rollout: Rollout): string {
  const shares = rollout.variations.map((v) => `${percentText(v.weight)} ${v.variant}`).join(", ");
  return `${shares} by ${rollout.bucket_by ?? "key"}`;
}

/** What a serve gives: "variant on" or a rollout's shares. */
export function serveText(serve: Serve): string {
  return "variant" in serve ? `variant ${serve.variant}` : rolloutText(serve.rollout);
}

/** A rule in words: "If country is one of DE, FR and plan is pro → variant on". */
export function ruleText(rule: Pick<Rule, "clauses" | "serve">): string {
  const [first, ...rest] = rule.clauses;
  if (!first) return `Everyone → ${serveText(rule.serve)}`;
  const firstText = first.op === "in_segment" ? clauseText(first) : `If ${clauseText(first)}`;
  const more = rest.map((c) => (c.op === "in_segment" ? `users in segment ${list(c.values)}` : clauseText(c)));
  return `${[firstText, ...more].join(" and ")} → ${serveText(rule.serve)}`;
}

/** The fallthrough in words: "Otherwise: 20% on, 80% off by key". */
export function fallthroughText(serve: Serve): string {
  return `Otherwise: ${serveText(serve)}`;
}

/**
 * The weights a rollout form posted, one percent per variant (`"20"`, `"33.333"`), as the
 * contract's integer weights; an error in words when a share is not a number from 0 to 100 with at
 * most three decimals, or when the shares do not add up to 100%.
 */
export function parseShares(shares: Array<{ variant: string; percent: string }>): { variations: Rollout["variations"] } | { error: string } {
  const variations: Rollout["variations"] = [];
  for (const { variant, percent } of shares) {
    const text = percent.trim() === "" ? "0" : percent.trim();
    if (!/^\d{1,3}(\.\d{1,3})?$/.test(text) || Number(text) > 100) {
      return { error: `The share of ${variant} must be a percentage from 0 to 100 with at most three decimals (it was "${percent}").` };
    }
    variations.push({ variant, weight: Math.round(Number(text) * 1000) });
  }
  const total = variations.reduce((sum, v) => sum + v.weight, 0);
  if (total !== WEIGHT_TOTAL) return { error: `The shares add up to ${percentText(total)}; they must add up to exactly 100%.` };
  return { variations };
}
