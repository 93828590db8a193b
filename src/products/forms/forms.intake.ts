// Reading a public form post into fields, instructions and files, and checking it against the
// form: the three body encodings (urlencoded and JSON read capped at 1 MB, multipart streamed by
// multipart.ts within the form's file limit), the reserved `_` fields taken apart (never stored),
// repeated names kept as lists, then each rule of the contract as a `{field, code, message}`.
import { readBodyCapped } from "../../platform/body";
import { ApiError } from "../../platform/errors";
import type { FormField } from "../../db/schema/forms";
import { FIELD_CODES, MAX_FIELDS, MAX_TEXT_BYTES, type FieldCode } from "./forms.schemas";
import { boundaryOf, MultipartError, readMultipart, type MultipartFile } from "./multipart";

/** A field's value as stored: one text, or a list when the name came more than once. */
export type FieldValue = string | string[];

export interface Intake {
  /** Visitor fields in the order they came (names starting with `_` excluded). */
  fields: Map<string, string[]>;
  /** The reserved instructions (`_next`, `_subject`, `_replyto`, `_gotcha`); other `_` names are dropped. */
  next: string | null;
  subject: string | null;
  replyTo: string | null;
  gotcha: boolean;
  files: MultipartFile[];
}

export interface FieldProblem {
  field: string | null;
  code: FieldCode;
  message: string;
}

/** A refusal of the whole body (413, 415, 400) or of its fields (422 with `problems`). */
export class IntakeError extends Error {
  constructor(
    readonly status: 400 | 403 | 413 | 415 | 422,
    readonly code: string,
    message: string,
    readonly problems: FieldProblem[] = [],
  ) {
    super(message);
  }
}

const tooLarge = () => new ApiError("payload_too_large", "Payload too large (max 1MB)");

/** What the body is, from its Content-Type; null for anything else (415). */
export function encodingOf(contentType: string): "urlencoded" | "multipart" | "json" | null {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type === "application/x-www-form-urlencoded") return "urlencoded";
  if (type === "multipart/form-data") return "multipart";
  if (type === "application/json") return "json";
  return null;
}

async function readText(request: Request): Promise<string> {
  try {
    return new TextDecoder().decode(await readBodyCapped(request, MAX_TEXT_BYTES, tooLarge));
  } catch (error) {
    if (error instanceof ApiError)
      throw new IntakeError(413, "PAYLOAD_TOO_LARGE", "The form is larger than 1 MB; send less text (files only where the form takes files)");
    throw new IntakeError(400, "MALFORMED_BODY", "The body could not be read");
  }
}

/** One JSON value as field texts: text, numbers and booleans, or a list of them. */
function jsonTexts(name: string, value: unknown): string[] | null {
  if (value === null || value === undefined) return [];
  if (typeof value === "string") return [value];
  if (typeof value === "number" || typeof value === "boolean") return [String(value)];
  if (Array.isArray(value)) {
    const out: string[] = [];
    for (const item of value) {
      const texts = typeof item === "object" && item !== null ? null : jsonTexts(name, item);
      if (!texts) return null;
      out.push(...texts);
    }
    return out;
  }
  return null;
}

/** Reads a post within the form's limits. Throws IntakeError with what to fix. */
export async function readIntake(request: Request, files: { enabled: boolean; maxBytes: number }): Promise<Intake> {
  const encoding = encodingOf(request.headers.get("content-type") ?? "");
  const pairs: Array<[string, string]> = [];
  let received: MultipartFile[] = [];
  if (encoding === null) {
    throw new IntakeError(415, "UNSUPPORTED_MEDIA_TYPE", "Send the form as application/x-www-form-urlencoded, multipart/form-data or application/json");
  }
  if (encoding === "urlencoded") {
    for (const pair of new URLSearchParams(await readText(request))) pairs.push(pair);
  } else if (encoding === "json") {
    const text = await readText(request);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new IntakeError(400, "MALFORMED_BODY", "The body is not valid JSON");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new IntakeError(400, "MALFORMED_BODY", 'The JSON body must be an object of fields, e.g. {"email": "a@example.com"}');
    }
    for (const [name, value] of Object.entries(body)) {
      const texts = jsonTexts(name, value);
      if (!texts)
        throw new IntakeError(
          400,
          "MALFORMED_BODY",
          `Field ${JSON.stringify(name.slice(0, 100))}: a value must be text, a number, a boolean or a list of them`,
        );
      for (const text of texts) pairs.push([name, text]);
    }
  } else {
    const boundary = boundaryOf(request.headers.get("content-type") ?? "");
    if (!boundary || !request.body) throw new IntakeError(400, "MALFORMED_BODY", "A multipart body needs its boundary in the Content-Type");
    try {
      const parsed = await readMultipart(request.body, boundary, {
        maxTextBytes: MAX_TEXT_BYTES,
        maxFileBytes: files.enabled ? files.maxBytes : 0,
        filesAllowed: files.enabled,
        maxParts: MAX_FIELDS * 20,
      });
      pairs.push(...parsed.fields);
      received = parsed.files;
    } catch (error) {
      if (!(error instanceof MultipartError)) throw new IntakeError(400, "MALFORMED_BODY", "The body could not be read");
      throw multipartRefusal(error, files.maxBytes);
    }
  }
  if (!files.enabled && received.length > 0) {
    throw new IntakeError(422, "FILES_NOT_ALLOWED", "This form does not accept files", [
      { field: received[0]!.field, code: "FILES_NOT_ALLOWED", message: "This form does not accept files" },
    ]);
  }
  const intake: Intake = { fields: new Map(), next: null, subject: null, replyTo: null, gotcha: false, files: received };
  for (const [name, value] of pairs) {
    if (name.startsWith("_")) {
      if (name === "_next") intake.next = value;
      else if (name === "_subject") intake.subject = value.slice(0, 200);
      else if (name === "_replyto") intake.replyTo = value.slice(0, 320);
      else if (name === "_gotcha") intake.gotcha ||= value.trim() !== "";
      continue;
    }
    const list = intake.fields.get(name);
    if (list) list.push(value);
    else intake.fields.set(name, [value]);
  }
  return intake;
}

function multipartRefusal(error: MultipartError, maxBytes: number): IntakeError {
  switch (error.reason) {
    case "text_too_large":
      return new IntakeError(413, "PAYLOAD_TOO_LARGE", "The text of the form is larger than 1 MB; send less text");
    case "files_too_big": {
      const message = `The files are larger than this form accepts (${maxBytes} bytes in all); send smaller files`;
      return new IntakeError(413, "FILES_TOO_BIG", message, [{ field: error.field, code: "FILES_TOO_BIG", message }]);
    }
    case "files_not_allowed":
      return new IntakeError(422, "FILES_NOT_ALLOWED", "This form does not accept files", [
        { field: error.field, code: "FILES_NOT_ALLOWED", message: "This form does not accept files" },
      ]);
    case "too_many_parts":
      return new IntakeError(422, "TOO_MANY_FIELDS", `A form takes at most ${MAX_FIELDS} fields`, [
        { field: null, code: "TOO_MANY_FIELDS", message: `A form takes at most ${MAX_FIELDS} fields` },
      ]);
    default:
      return new IntakeError(400, "MALFORMED_BODY", error.message);
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function isUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/**
 * The problems of a post against the form's declared fields (none declared: any names, at most
 * MAX_FIELDS of them). Undeclared names of a form with declarations are dropped, not refused.
 */
export function checkFields(intake: Intake, declared: FormField[] | null): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const names = new Set([...intake.fields.keys(), ...intake.files.map((f) => f.field)]);
  if (!declared) {
    if (names.size > MAX_FIELDS)
      problems.push({ field: null, code: "TOO_MANY_FIELDS", message: `A form takes at most ${MAX_FIELDS} fields; this one sent ${names.size}` });
    return problems;
  }
  for (const field of declared) {
    const values = (intake.fields.get(field.name) ?? []).filter((v) => v.trim() !== "");
    const hasFile = intake.files.some((f) => f.field === field.name);
    if (field.type === "file") {
      if (field.required && !hasFile) problems.push({ field: field.name, code: "REQUIRED_FIELD_MISSING", message: `${field.name} is required: attach a file` });
      continue;
    }
    if (values.length === 0) {
      if (field.required && !(field.type === "checkbox" && intake.fields.has(field.name))) {
        problems.push({ field: field.name, code: "REQUIRED_FIELD_MISSING", message: `${field.name} is required` });
      }
      continue;
    }
    for (const value of values) {
      if (field.max_length !== null && [...value].length > field.max_length) {
        problems.push({ field: field.name, code: "TOO_LONG", message: `${field.name} is longer than ${field.max_length} characters` });
        break;
      }
      if (field.type === "email" && !EMAIL.test(value.trim())) {
        problems.push({ field: field.name, code: "TYPE_EMAIL", message: `${field.name} must be an email address` });
        break;
      }
      if (field.type === "number" && !Number.isFinite(Number(value.trim()))) {
        problems.push({ field: field.name, code: "TYPE_NUMBER", message: `${field.name} must be a number` });
        break;
      }
      if (field.type === "url" && !isUrl(value.trim())) {
        problems.push({ field: field.name, code: "TYPE_URL", message: `${field.name} must be a web address (http or https)` });
        break;
      }
    }
  }
  return problems;
}

/** The fields kept: every name (no declarations) or the declared ones; one value as text, several as a list. */
export function storedFields(intake: Intake, declared: FormField[] | null): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {};
  const keep = declared ? new Set(declared.filter((f) => f.type !== "file").map((f) => f.name)) : null;
  for (const [name, values] of intake.fields) {
    if (keep && !keep.has(name)) continue;
    Object.defineProperty(out, name, { value: values.length === 1 ? values[0] : values, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

export { FIELD_CODES };
