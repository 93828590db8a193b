// Pure survey rules with no storage: the definition checks of a question per type (branching
// conditions included), the answer check per type (the spec's answer-shape table), and the
// branching walk that decides the next question. The services call these; tests exercise them through the HTTP API.
import type { FieldErrors } from "../../platform/errors";
import type { BranchCondition, Branching, JsonObject } from "../../db/schema/surveys";
import type { QuestionType } from "./surveys.schemas";

/** The part of a question the rules need. */
export interface QuestionShape {
  id: string;
  type: string;
  options: string[];
  settings: JsonObject;
  branching?: Branching;
  position?: number;
}

const TYPES_WITH_OPTIONS = new Set(["choice", "multi_choice", "ranking"]);

/** Field errors of a question definition (type, options and settings together). */
export function questionDefinitionErrors(q: { type: QuestionType; options: string[]; settings: JsonObject }): FieldErrors {
  const errors: FieldErrors = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (TYPES_WITH_OPTIONS.has(q.type)) {
    if (q.options.length === 0) add("options", `is required for type ${q.type}`);
    if (new Set(q.options).size !== q.options.length) add("options", "must not contain duplicates");
  } else if (q.options.length > 0) {
    add("options", `must be empty for type ${q.type}`);
  }
  if (q.type === "scale" || q.type === "slider") {
    const { min, max } = q.settings;
    if (!Number.isInteger(min)) add("settings.min", `must be an integer for type ${q.type}`);
    if (!Number.isInteger(max)) add("settings.max", `must be an integer for type ${q.type}`);
    if (Number.isInteger(min) && Number.isInteger(max) && (min as number) >= (max as number)) add("settings.max", "must be greater than settings.min");
  }
  if (q.type === "matrix") {
    for (const field of ["rows", "columns"] as const) {
      const list = q.settings[field];
      if (!isStringList(list) || list.length === 0) add(`settings.${field}`, "must be a non-empty array of strings for type matrix");
      else if (new Set(list).size !== list.length) add(`settings.${field}`, "must not contain duplicates");
    }
  }
  if (q.type === "text" && q.settings.multiline !== undefined && typeof q.settings.multiline !== "boolean") {
    add("settings.multiline", "must be a boolean");
  }
  if (q.settings.required !== undefined && typeof q.settings.required !== "boolean") add("settings.required", "must be a boolean");
  return errors;
}

/** Question types whose answers are numbers the comparison operators apply to. */
const NUMERIC_TYPES = new Set(["rating", "nps", "scale", "slider"]);
const COMPARISONS = ["less_than", "less_than_or_equal", "greater_than", "greater_than_or_equal"] as const;

/**
 * Field errors of a question's branching conditions against its type: a comparison needs a
 * numeric question, `includes` a multi_choice question and one of its options. `equals` keeps
 * its meaning (deep equality) on every type.
 */
export function branchingConditionErrors(q: { type: string; options: string[]; branching: Branching }): FieldErrors {
  const errors: FieldErrors = {};
  q.branching.rules.forEach((rule, i) => {
    const field = `branching.rules.${i}.if`;
    const condition = rule.if as Record<string, unknown>;
    const add = (message: string) => (errors[field] ??= []).push(message);
    for (const op of COMPARISONS) {
      if (op in condition && !NUMERIC_TYPES.has(q.type)) add(`${op} needs a numeric question (rating, nps, scale, slider), not ${q.type}`);
    }
    if ("includes" in condition) {
      if (q.type !== "multi_choice") add(`includes needs a multi_choice question, not ${q.type}`);
      else if (!q.options.includes(condition.includes as string)) add("includes must be one of the question's options");
    }
  });
  return errors;
}

/** Whether an answer satisfies a branching condition. Null answers only ever match `equals: null`. */
export function conditionHolds(condition: BranchCondition, value: unknown): boolean {
  if ("equals" in condition) return canonical(condition.equals) === canonical(value);
  if ("includes" in condition) return Array.isArray(value) && value.includes(condition.includes);
  if (typeof value !== "number") return false;
  if ("less_than" in condition) return value < condition.less_than;
  if ("less_than_or_equal" in condition) return value <= condition.less_than_or_equal;
  if ("greater_than" in condition) return value > condition.greater_than;
  if ("greater_than_or_equal" in condition) return value >= condition.greater_than_or_equal;
  return false;
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === "string" && v.length > 0);
}

// An RFC 5322 dot-atom address with a DNS domain: the form mail systems accept in practice.
const EMAIL_LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const EMAIL_DOMAIN = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

export function isEmail(value: string): boolean {
  if (value.length > 254) return false;
  const at = value.lastIndexOf("@");
  if (at <= 0) return false;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  return local.length <= 64 && EMAIL_LOCAL.test(local) && EMAIL_DOMAIN.test(domain);
}

/** True for a real calendar date written YYYY-MM-DD. */
export function isIsoDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

/** Why an answer does not fit its question, or null when it does. */
export function answerError(q: QuestionShape, value: unknown): string | null {
  if (value === null || value === undefined) {
    return q.settings.required === false ? null : "is required";
  }
  switch (q.type) {
    case "text":
      if (typeof value !== "string") return "must be a string";
      if (value.trim().length === 0) return "can't be blank";
      if (value.length > 10_000) return "must be at most 10000 characters";
      if (q.settings.multiline !== true && /[\r\n]/.test(value)) return "must be a single line";
      return null;
    case "email":
      return typeof value === "string" && isEmail(value) ? null : "must be a valid email address";
    case "choice":
      return typeof value === "string" && q.options.includes(value) ? null : "must be one of the question's options";
    case "multi_choice": {
      if (!Array.isArray(value) || value.length === 0) return "must be a non-empty array of the question's options";
      if (!value.every((v) => typeof v === "string" && q.options.includes(v))) return "must only contain the question's options";
      if (new Set(value).size !== value.length) return "must not repeat an option";
      return null;
    }
    case "rating":
      return isInt(value) && value >= 1 && value <= 5 ? null : "must be an integer from 1 to 5";
    case "nps":
      return isInt(value) && value >= 0 && value <= 10 ? null : "must be an integer from 0 to 10";
    case "scale":
    case "slider": {
      const min = q.settings.min as number;
      const max = q.settings.max as number;
      return isInt(value) && value >= min && value <= max ? null : `must be an integer from ${min} to ${max}`;
    }
    case "matrix": {
      const rows = (q.settings.rows as string[]) ?? [];
      const columns = (q.settings.columns as string[]) ?? [];
      if (typeof value !== "object" || Array.isArray(value)) return "must be an object mapping each row to a column";
      const entries = Object.entries(value as Record<string, unknown>);
      for (const [row, column] of entries) {
        if (!rows.includes(row)) return `has an unknown row: ${row}`;
        if (typeof column !== "string" || !columns.includes(column)) return `row ${row} must map to one of the columns`;
      }
      const missing = rows.filter((row) => !(row in (value as object)));
      if (missing.length) return `must answer every row (missing: ${missing.join(", ")})`;
      return null;
    }
    case "ranking": {
      if (!Array.isArray(value)) return "must be an array ordering every option";
      const ok =
        value.length === q.options.length && value.every((v) => typeof v === "string" && q.options.includes(v)) && new Set(value).size === value.length;
      return ok ? null : "must list every option exactly once";
    }
    case "yes_no":
      return typeof value === "boolean" ? null : "must be true or false";
    case "date":
      return typeof value === "string" && isIsoDate(value) ? null : "must be a real date written YYYY-MM-DD";
    default:
      return "has an unknown question type";
  }
}

/** JSON with sorted object keys, so two equal answers compare equal whatever their key order. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const keys = Object.keys(value as object).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The next question of a manual survey after `current` was answered with `value`.
 * `ordered` is the survey's current questions by position; `answered` the ids already on the path.
 * A jump to a question that no longer exists or is already answered falls back to the next one,
 * so a path can never loop.
 */
export function nextManualQuestion(ordered: QuestionShape[], current: QuestionShape, value: unknown, answered: ReadonlySet<string>): string | null {
  const branching = current.branching;
  const rule = branching?.rules.find((r) => conditionHolds(r.if, value));
  const then = rule?.then ?? branching?.default ?? { go_to_next: true };
  if ("skip_to_end" in then) return null;
  if ("go_to_question_id" in then) {
    const target = ordered.find((q) => q.id === then.go_to_question_id);
    if (target && !answered.has(target.id) && target.id !== current.id) return target.id;
  }
  return nextInOrder(ordered, current.id, answered);
}

/** The first unanswered question after `currentId` in survey order (from the start when it is gone). */
export function nextInOrder(ordered: QuestionShape[], currentId: string | null, answered: ReadonlySet<string>): string | null {
  const index = currentId ? ordered.findIndex((q) => q.id === currentId) : -1;
  for (let i = index + 1; i < ordered.length; i++) {
    if (!answered.has(ordered[i].id) && ordered[i].id !== currentId) return ordered[i].id;
  }
  return null;
}
