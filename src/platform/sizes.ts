// Byte sizes of what callers store. Every free-form object a caller stores has a byte cap
// (docs/ARCHITECTURE.md "Sizes"), counted in UTF-8 bytes of its JSON, never in characters.
import { z } from "@hono/zod-openapi";

/**
 * The byte cap of every free-form JSON value a caller stores, unless its product documents another
 * (docs/ARCHITECTURE.md "Stored free-form JSON has a byte cap"): survey and question settings and options,
 * ai_config, branching, push credentials and notification data, mail headers taken together.
 */
export const FREE_FORM_JSON_BYTES = 16 * 1024;

/** UTF-8 byte length of a string without encoding it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** True when a value's JSON is at most `maxBytes` UTF-8 bytes. */
export function jsonFits(value: unknown, maxBytes: number): boolean {
  return utf8Length(JSON.stringify(value) ?? "") <= maxBytes;
}

/** The message of a byte-cap failure, e.g. "must be at most 8 KB of JSON". */
export function jsonCapMessage(maxBytes: number): string {
  return `must be at most ${maxBytes / 1024} KB of JSON`;
}

/** A free-form JSON object a caller stores, capped at `maxBytes` of JSON. */
export function cappedJsonObject(maxBytes: number) {
  return z.record(z.string(), z.unknown()).refine((value) => jsonFits(value, maxBytes), jsonCapMessage(maxBytes));
}

/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
