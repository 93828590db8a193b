// Writes test/products/flags/vectors.json, the one shared set of evaluation vectors (the server's
// tests and clients/openfeature's tests both read it). Run with `node test/products/flags/make-vectors.mjs`.
// The expected buckets and rollout variants are computed here with Node's own crypto sha1 and the
// contract's formula written out again, independently of src/products/flags/evaluate.ts and its
// sha1; every other expectation is stated by hand below.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";

const bucket = (flagKey, salt, value) =>
  Number.parseInt(createHash("sha1").update(`${flagKey}.${salt}.${value}`, "utf8").digest("hex").slice(0, 15), 16) / 0xfffffffffffffff;

/** The contract's rule: the first variation whose running total of weight/100000 exceeds the bucket, else the last. */
function pick(variations, b) {
  let total = 0;
  for (const v of variations) {
    total += v.weight / 100000;
    if (total > b) return v.variant;
  }
  return variations[variations.length - 1].variant;
}

const split = { bucket_by: "key", variations: [{ variant: "a", weight: 25000 }, { variant: "b", weight: 25000 }, { variant: "c", weight: 50000 }] };
const byOrg = { bucket_by: "org", variations: [{ variant: "off", weight: 0 }, { variant: "on", weight: 50000 }, { variant: "off", weight: 50000 }] };

const ruleset = {
  environment: "production",
  version: 7,
  segments: {
    beta: { key: "beta", included: ["u-included", "u-both"], excluded: ["u-both", "u-excluded"], rules: [{ id: "s1", clauses: [{ attribute: "plan", op: "in", values: ["beta"] }] }] },
    staff: { key: "staff", included: [], excluded: [], rules: [{ clauses: [{ attribute: "email", op: "ends_with", values: ["@acme.dev"] }] }] },
  },
  flags: {
    "kill-switch": { key: "kill-switch", type: "boolean", variants: { on: true, off: false }, off_variant: "off", salt: "s-kill", version: 3, client_side: true,
      config: { enabled: false, rules: [{ id: "r1", clauses: [{ attribute: "key", op: "in", values: ["u1"] }], serve: { variant: "on" } }], fallthrough: { variant: "on" } } },
    "no-config": { key: "no-config", type: "string", variants: { x: "X", y: "Y" }, off_variant: "y", salt: "s-nc", version: 1, client_side: false },
    targeting: { key: "targeting", type: "string", variants: { gold: "gold", silver: "silver", std: "standard" }, off_variant: "std", salt: "s-t", version: 9, client_side: true,
      config: { enabled: true, fallthrough: { variant: "std" }, rules: [
        { id: "r-country", clauses: [{ attribute: "country", op: "in", values: ["FR", "DE"] }, { attribute: "age", op: "gte", values: [18] }], serve: { variant: "gold" } },
        { id: "r-not", clauses: [{ attribute: "country", op: "not_in", values: ["FR", "DE", "US"] }], serve: { variant: "silver" } },
        { id: "r-seg", clauses: [{ attribute: "key", op: "in_segment", values: ["beta", "staff"] }], serve: { variant: "silver" } },
        { id: "r-ver", clauses: [{ attribute: "app_version", op: "semver_gt", values: ["2.0.0"] }, { attribute: "app_version", op: "semver_lt", values: ["3.0.0-rc.1"] }], serve: { variant: "gold" } },
        { id: "r-str", clauses: [{ attribute: "name", op: "starts_with", values: ["Dr"] }, { attribute: "name", op: "contains", values: ["Who"] }], serve: { variant: "gold" } },
        { id: "r-arr", clauses: [{ attribute: "groups", op: "in", values: ["admins"] }], serve: { variant: "gold" } },
        { id: "r-num", clauses: [{ attribute: "score", op: "lt", values: [0.5] }, { attribute: "score", op: "gt", values: [0.1] }], serve: { variant: "silver" } },
      ] } },
    experiment: { key: "experiment", type: "string", variants: { a: "A", b: "B", c: "C" }, off_variant: "a", salt: "salt-42", version: 2, client_side: false,
      config: { enabled: true, rules: [], fallthrough: { rollout: split } } },
    "org-rollout": { key: "org-rollout", type: "json", variants: { on: { limit: 10 }, off: { limit: 1 } }, off_variant: "off", salt: "x9", version: 5, client_side: false,
      config: { enabled: true, rules: [{ id: "r-roll", clauses: [{ attribute: "tier", op: "in", values: ["paid"] }], serve: { rollout: byOrg } }], fallthrough: { variant: "off" } } },
  },
};

const cases = [];
const add = (name, context, flag, expected) => cases.push({ name, context, flag, expected });
const val = (flag, variant) => ruleset.flags[flag].variants[variant];

add("missing flag", { key: "u1" }, "nope", { value: null, variant: null, reason: "ERROR", error_code: "FLAG_NOT_FOUND" });
add("disabled environment serves off_variant even when a rule matches", { key: "u1" }, "kill-switch", { value: false, variant: "off", reason: "DISABLED" });
add("no configuration for the environment is off", { key: "u1" }, "no-config", { value: "Y", variant: "y", reason: "DISABLED" });
add("all clauses of a rule must match (in, gte)", { key: "u1", country: "FR", age: 30 }, "targeting", { value: "gold", variant: "gold", reason: "TARGETING_MATCH", rule_id: "r-country" });
add("one clause failing skips the rule; not_in falls to next", { key: "u1", country: "FR", age: 12 }, "targeting", { value: "standard", variant: "std", reason: "DEFAULT" });
add("not_in matches none of the values", { key: "u1", country: "JP" }, "targeting", { value: "silver", variant: "silver", reason: "TARGETING_MATCH", rule_id: "r-not" });
add("a missing attribute never matches, not even not_in", { key: "u1" }, "targeting", { value: "standard", variant: "std", reason: "DEFAULT" });
add("segment: included key", { key: "u-included", country: "US" }, "targeting", { value: "silver", variant: "silver", reason: "TARGETING_MATCH", rule_id: "r-seg" });
add("segment: excluded wins over included", { key: "u-both", country: "US" }, "targeting", { value: "standard", variant: "std", reason: "DEFAULT" });
add("segment: excluded wins over the segment's rules", { key: "u-excluded", country: "US", plan: "beta" }, "targeting", { value: "standard", variant: "std", reason: "DEFAULT" });
add("segment: its rules", { key: "u9", country: "US", plan: "beta" }, "targeting", { value: "silver", variant: "silver", reason: "TARGETING_MATCH", rule_id: "r-seg" });
add("segment: any of the listed segments", { key: "u9", country: "US", email: "x@acme.dev" }, "targeting", { value: "silver", variant: "silver", reason: "TARGETING_MATCH", rule_id: "r-seg" });
add("targetingKey is the key", { targetingKey: "u-included", country: "US" }, "targeting", { value: "silver", variant: "silver", reason: "TARGETING_MATCH", rule_id: "r-seg" });
add("semver range", { key: "u1", country: "US", app_version: "2.10.1" }, "targeting", { value: "gold", variant: "gold", reason: "TARGETING_MATCH", rule_id: "r-ver" });
add("semver: pre-release below its release", { key: "u1", country: "US", app_version: "3.0.0-beta.2" }, "targeting", { value: "gold", variant: "gold", reason: "TARGETING_MATCH", rule_id: "r-ver" });
add("semver: the release is above its pre-release", { key: "u1", country: "US", app_version: "3.0.0" }, "targeting", { value: "standard", variant: "std", reason: "DEFAULT" });
add("semver: not a version never matches", { key: "u1", country: "US", app_version: "latest" }, "targeting", { value: "standard", variant: "std", reason: "DEFAULT" });
add("starts_with and contains", { key: "u1", country: "US", name: "Dr Who" }, "targeting", { value: "gold", variant: "gold", reason: "TARGETING_MATCH", rule_id: "r-str" });
add("array attribute: any element", { key: "u1", country: "US", groups: ["dev", "admins"] }, "targeting", { value: "gold", variant: "gold", reason: "TARGETING_MATCH", rule_id: "r-arr" });
add("numbers compare as numbers only", { key: "u1", country: "US", score: "0.3" }, "targeting", { value: "standard", variant: "std", reason: "DEFAULT" });
add("lt and gt", { key: "u1", country: "US", score: 0.3 }, "targeting", { value: "silver", variant: "silver", reason: "TARGETING_MATCH", rule_id: "r-num" });

const keys = ["user-1", "user-2", "user-3", "alice", "bob", "carol", "dave", "é-ünïcode-✓", "12345", ""];
for (const key of keys) {
  const b = bucket("experiment", "salt-42", key);
  const variant = pick(split.variations, b);
  add(`fallthrough split for key ${JSON.stringify(key)} (bucket ${b})`, { key }, "experiment", { value: val("experiment", variant), variant, reason: "SPLIT" });
}
add("no key: the first variation with a weight", { country: "US" }, "experiment", { value: "A", variant: "a", reason: "SPLIT", bucket_missing: "key" });
add("a non-string key counts as missing", { key: 42.5 }, "experiment", { value: "A", variant: "a", reason: "SPLIT", bucket_missing: "key" });
for (const org of ["acme", "globex", 7, 123456789]) {
  const b = bucket("org-rollout", "x9", String(org));
  const variant = pick(byOrg.variations, b);
  add(`rule rollout bucketed by org ${org} (bucket ${b})`, { key: "k", tier: "paid", org }, "org-rollout", { value: val("org-rollout", variant), variant, reason: "SPLIT", rule_id: "r-roll" });
}
add("rollout: missing bucket_by skips zero weights", { key: "k", tier: "paid" }, "org-rollout", { value: { limit: 10 }, variant: "on", reason: "SPLIT", rule_id: "r-roll", bucket_missing: "org" });
add("rollout: a boolean bucket_by counts as missing", { key: "k", tier: "paid", org: true }, "org-rollout", { value: { limit: 10 }, variant: "on", reason: "SPLIT", rule_id: "r-roll", bucket_missing: "org" });

for (const c of cases) if (c.expected.version === undefined) c.expected.version = c.expected.variant === null ? null : ruleset.flags[c.flag].version;

const buckets = [
  ["experiment", "salt-42", "user-1"],
  ["experiment", "salt-42", "alice"],
  ["flag", "salt", "key"],
  ["checkout.v2", "Zq0-1", "8d7f3a"],
  ["a", "b", ""],
  ["unicode", "s", "é-ünïcode-✓"],
].map(([flag_key, salt, value]) => ({ flag_key, salt, value, sha1: createHash("sha1").update(`${flag_key}.${salt}.${value}`).digest("hex"), bucket: bucket(flag_key, salt, value) }));

const out = {
  about: "Shared evaluation vectors of the flags product (NAMED-PRODUCTS.md Feature flags). Generated by make-vectors.mjs: buckets and rollout variants from Node's crypto sha1, the rest by hand.",
  ruleset,
  buckets,
  cases,
};
writeFileSync(new URL("./vectors.json", import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
console.log(`${cases.length} cases, ${buckets.length} buckets`);
