// A streaming multipart/form-data reader (RFC 7578) over the request's ReadableStream: parts are
// cut at the boundary as chunks arrive, each part's bytes counted as they come, so a body past
// its limits is abandoned at once (the stream cancelled, nothing kept) instead of being read to
// its end. `Request.formData()` would buffer the whole body first; this never does.
// Text parts count against `maxTextBytes` (413), file parts against `maxFileBytes` (FILES_TOO_BIG);
// a file where files are off is refused at its headers (FILES_NOT_ALLOWED).

export interface MultipartLimits {
  maxTextBytes: number;
  maxFileBytes: number;
  filesAllowed: boolean;
  /** Parts taken before TOO_MANY_FIELDS (well past the field cap: repeated names are one field). */
  maxParts: number;
}

export interface MultipartFile {
  field: string;
  name: string;
  contentType: string;
  bytes: Uint8Array;
}

export interface MultipartResult {
  fields: Array<[string, string]>;
  files: MultipartFile[];
}

/** Why a multipart body was refused; the intake turns each into the public answer. */
export class MultipartError extends Error {
  constructor(
    readonly reason: "malformed" | "text_too_large" | "files_too_big" | "files_not_allowed" | "too_many_parts",
    message: string,
    readonly field: string | null = null,
  ) {
    super(message);
  }
}

/** The boundary of a `multipart/form-data` content type, or null. */
export function boundaryOf(contentType: string): string | null {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return match ? (match[1] ?? match[2] ?? null) : null;
}

const encoder = new TextEncoder();
const CRLF_CRLF = encoder.encode("\r\n\r\n");
/** Headers of one part larger than this are malformed. */
const MAX_HEADER_BYTES = 8 * 1024;

/** The first index of `needle` in `haystack` at or after `from`, or -1. */
function indexOf(haystack: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0];
  const last = haystack.length - needle.length;
  outer: for (let i = haystack.indexOf(first, from); i !== -1 && i <= last; i = haystack.indexOf(first, i + 1)) {
    for (let j = 1; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** A header parameter (`name="x"`, `filename*=UTF-8''x`) of a Content-Disposition value. */
function param(value: string, key: string): string | null {
  const star = new RegExp(`;\\s*${key}\\*\\s*=\\s*(?:UTF-8|utf-8)''([^;]*)`).exec(value);
  if (star) {
    try {
      return decodeURIComponent(star[1].trim());
    } catch {
      return null;
    }
  }
  const quoted = new RegExp(`;\\s*${key}\\s*=\\s*"((?:[^"\\\\]|\\\\.)*)"`, "i").exec(value);
  if (quoted) return quoted[1].replace(/\\(.)/g, "$1");
  const bare = new RegExp(`;\\s*${key}\\s*=\\s*([^;\\s]+)`, "i").exec(value);
  return bare ? bare[1] : null;
}

interface PartHead {
  name: string;
  filename: string | null;
  contentType: string;
}

function parseHead(bytes: Uint8Array): PartHead {
  const text = new TextDecoder().decode(bytes);
  let disposition = "";
  let contentType = "application/octet-stream";
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === "content-disposition") disposition = value;
    else if (key === "content-type") contentType = value.slice(0, 200);
  }
  if (!/^form-data\b/i.test(disposition)) throw new MultipartError("malformed", "Each part needs a Content-Disposition: form-data header");
  const name = param(disposition, "name");
  if (name === null) throw new MultipartError("malformed", "Each part needs a name");
  return { name, filename: param(disposition, "filename"), contentType };
}

/**
 * Reads a multipart body to its closing boundary, within `limits`. Throws MultipartError (the
 * stream cancelled) at the first limit passed or on a body that is not multipart.
 */
export async function readMultipart(stream: ReadableStream<Uint8Array>, boundary: string, limits: MultipartLimits): Promise<MultipartResult> {
  const delimiter = encoder.encode(`\r\n--${boundary}`);
  const reader = stream.getReader();
  const result: MultipartResult = { fields: [], files: [] };
  const decoder = new TextDecoder();
  // The body begins with `--boundary`: a CRLF in front makes every delimiter look the same.
  let buf: Uint8Array = encoder.encode("\r\n");
  let state: "preamble" | "after" | "head" | "body" | "done" = "preamble";
  let head: PartHead | null = null;
  let chunks: Uint8Array[] = [];
  let textBytes = 0;
  let fileBytes = 0;
  let parts = 0;

  const take = (bytes: Uint8Array) => {
    if (bytes.length === 0 || !head) return;
    if (head.filename !== null) {
      fileBytes += bytes.length;
      if (fileBytes > limits.maxFileBytes) throw new MultipartError("files_too_big", "The files are larger than this form accepts", head.name);
    } else {
      textBytes += bytes.length;
      if (textBytes > limits.maxTextBytes) throw new MultipartError("text_too_large", "The text of the form is too large");
    }
    chunks.push(bytes.slice());
  };
  const endPart = () => {
    if (!head) return;
    const size = chunks.reduce((n, c) => n + c.length, 0);
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.length;
    }
    if (head.filename === null) result.fields.push([head.name, decoder.decode(bytes)]);
    // A file input left empty sends a part with no name and no bytes: no file.
    else if (head.filename !== "" || size > 0) result.files.push({ field: head.name, name: head.filename, contentType: head.contentType, bytes });
    head = null;
    chunks = [];
  };

  const step = (): boolean => {
    for (;;) {
      if (state === "preamble") {
        const at = indexOf(buf, delimiter);
        if (at === -1) {
          textBytes += Math.max(0, buf.length - delimiter.length);
          if (textBytes > limits.maxTextBytes) throw new MultipartError("text_too_large", "The text of the form is too large");
          buf = buf.subarray(Math.max(0, buf.length - delimiter.length + 1));
          return false;
        }
        buf = buf.subarray(at + delimiter.length);
        state = "after";
      } else if (state === "after") {
        if (buf.length < 2) return false;
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          state = "done";
          return true;
        }
        // Transport padding (spaces, tabs) may follow a delimiter before its CRLF.
        let i = 0;
        while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x09)) i++;
        if (buf.length < i + 2) return false;
        if (buf[i] !== 0x0d || buf[i + 1] !== 0x0a) throw new MultipartError("malformed", "The multipart body is malformed (no line break after a boundary)");
        buf = buf.subarray(i + 2);
        state = "head";
      } else if (state === "head") {
        const at = indexOf(buf, CRLF_CRLF);
        if (at === -1) {
          if (buf.length > MAX_HEADER_BYTES) throw new MultipartError("malformed", "A part's headers are too large");
          return false;
        }
        if (at > MAX_HEADER_BYTES) throw new MultipartError("malformed", "A part's headers are too large");
        head = parseHead(buf.subarray(0, at));
        if (++parts > limits.maxParts) throw new MultipartError("too_many_parts", "The form has too many fields");
        textBytes += at;
        if (head.filename !== null && head.filename !== "" && !limits.filesAllowed) {
          throw new MultipartError("files_not_allowed", "This form does not accept files", head.name);
        }
        buf = buf.subarray(at + 4);
        state = "body";
      } else if (state === "body") {
        const at = indexOf(buf, delimiter);
        if (at === -1) {
          const safe = buf.length - (delimiter.length - 1);
          if (safe > 0) {
            take(buf.subarray(0, safe));
            buf = buf.subarray(safe);
          }
          return false;
        }
        take(buf.subarray(0, at));
        endPart();
        buf = buf.subarray(at + delimiter.length);
        state = "after";
      } else return true;
    }
  };

  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf = concat(buf, value);
      if (step()) break;
    }
    if ((state as string) !== "done") throw new MultipartError("malformed", "The multipart body ended before its closing boundary");
    return result;
  } finally {
    reader.cancel().catch(() => {});
  }
}
