// The opaque page cursors of the cursor-paged lists (log entries, alert firings, the request log):
// a short text position, base64url-encoded; anything that does not decode to the expected form is the same 422.
import { fromBase64Url, toBase64Url } from "./crypto";
import { ApiError } from "./errors";

export function encodeCursor(position: string): string {
  return toBase64Url(new TextEncoder().encode(position));
}

/** The match of `form` on the decoded cursor, or 422 `cursor: ['is invalid']`. */
export function decodeCursor(cursor: string, form: RegExp): RegExpExecArray {
  try {
    const match = form.exec(new TextDecoder().decode(fromBase64Url(cursor)));
    if (match) return match;
  } catch {
    // fall through to the validation error
  }
  throw ApiError.validation({ cursor: ["is invalid"] });
}
