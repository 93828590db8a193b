// Messages written for people for every zod failure the platform renders: "is required",
// "must be one of: manual, ai", "must be at most 200 characters". Installed once as zod's global
// error map (router.ts imports this module), so every schema without a message of its own speaks
// this way; a message a schema states itself (a regex's explanation, "can't be blank") still wins.
// Read with the field as the key of `details` / `errors`: `{name: ["is required"]}`.
import { z } from "zod";

type Issue = z.core.$ZodRawIssue;

/** "must be a string", "must be an object", ... for zod's expected type names. */
const EXPECTED: Record<string, string> = {
  string: "must be a string",
  number: "must be a number",
  int: "must be a whole number",
  bigint: "must be a whole number",
  boolean: "must be true or false",
  array: "must be an array",
  tuple: "must be an array",
  object: "must be an object",
  record: "must be an object",
  map: "must be an object",
  date: "must be a date",
  null: "must be null",
};

/** Formats named by zod's string checks. */
const FORMATS: Record<string, string> = {
  email: "must be a valid email address",
  url: "must be a valid URL",
  uuid: "must be a UUID",
  guid: "must be a UUID",
  datetime: "must be an ISO 8601 date-time (e.g. 2026-01-31T12:00:00Z)",
  date: "must be a date as YYYY-MM-DD",
  time: "must be a time as HH:MM[:SS]",
  ipv4: "must be an IPv4 address",
  ipv6: "must be an IPv6 address",
  base64: "must be base64",
  base64url: "must be base64url",
};

/** Values of an enum or literal as a person reads them: strings bare, anything else as JSON. */
function listValues(values: readonly unknown[]): string {
  return values.map((value) => (typeof value === "string" ? value : JSON.stringify(value))).join(", ");
}

function sizeMessage(issue: Issue & { code: "too_small" | "too_big" }): string {
  const small = issue.code === "too_small";
  const bound = Number(small ? issue.minimum : issue.maximum);
  const inclusive = issue.inclusive !== false;
  switch (issue.origin) {
    case "string":
      if (small && bound === 1) return "can't be blank";
      return `must be ${small ? "at least" : "at most"} ${bound} characters`;
    case "array":
    case "set":
      if (small && bound === 1) return "must not be empty";
      return `must have ${small ? "at least" : "at most"} ${bound} item${bound === 1 ? "" : "s"}`;
    default:
      if (inclusive) return `must be ${small ? "at least" : "at most"} ${bound}`;
      return `must be ${small ? "greater" : "less"} than ${bound}`;
  }
}

/** The message for one zod issue. */
export function peopleMessage(issue: Issue): string {
  // A missing field fails on its type, or on its enum or union: either way the person forgot it.
  const missing = issue.input === undefined && (issue.code === "invalid_type" || issue.code === "invalid_value" || issue.code === "invalid_union");
  if (missing) return "is required";
  switch (issue.code) {
    case "invalid_type":
      return EXPECTED[issue.expected] ?? `must be ${issue.expected}`;
    case "invalid_value":
      return issue.values.length === 1 ? `must be ${listValues(issue.values)}` : `must be one of: ${listValues(issue.values)}`;
    case "too_small":
    case "too_big":
      return sizeMessage(issue);
    case "invalid_format":
      if (issue.format === "regex") return "has an invalid format";
      if (issue.format === "starts_with" || issue.format === "ends_with" || issue.format === "includes") return "has an invalid format";
      return FORMATS[issue.format] ?? `must be a valid ${issue.format}`;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    case "unrecognized_keys":
      return "is not a known field";
    case "invalid_key":
      return "has an invalid key";
    case "invalid_element":
      return "has an invalid item";
    case "invalid_union":
      return "does not match any allowed form";
    default:
      return "is invalid";
  }
}

z.config({ customError: peopleMessage });
