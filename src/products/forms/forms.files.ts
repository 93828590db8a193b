// Files of form submissions in R2 (binding FORM_FILES): where each is kept, the 5-minute signed
// links webhooks and mails carry (never the file itself), and the one way a file is served: as an
// attachment with a sanitised name, `application/octet-stream`, `nosniff` and a sandbox policy,
// so nothing a visitor uploaded is ever rendered on the app's origin.
import type { Env } from "../../env";
import { settings } from "../../platform/config";
import { nowMs } from "../../platform/clock";
import { signToken, verifyToken } from "../../platform/crypto";

/** How long a signed file link works. */
export const FILE_LINK_TTL_MS = 5 * 60_000;

/** A file as a submission lists it. */
export interface StoredFile {
  id: string;
  field: string;
  name: string;
  content_type: string;
  size: number;
}

/** The R2 key of one file: under its form, so a form's files go with it. */
export function fileKey(formId: string, submissionId: string, fileId: string): string {
  return `forms/${formId}/${submissionId}/${fileId}`;
}

/** The prefix of every file of a form. */
export const formPrefix = (formId: string) => `forms/${formId}/`;

interface FileClaim {
  k: "form_file";
  f: string;
  s: string;
  i: string;
  e: number;
}

/** A link to one file that works for 5 minutes, for webhooks and mails. */
export async function signedFileUrl(env: Env, formId: string, submissionId: string, fileId: string): Promise<string> {
  const claim: FileClaim = { k: "form_file", f: formId, s: submissionId, i: fileId, e: nowMs() + FILE_LINK_TTL_MS };
  return `${settings(env).appUrl}/f/${formId}/files/${await signToken(env.SIGNING_KEY, claim as unknown as Record<string, unknown>)}`;
}

/** The file a link names, while it is valid and for the form of its path; else null. */
export async function verifyFileLink(env: Env, formId: string, token: string): Promise<{ submissionId: string; fileId: string } | null> {
  const claim = await verifyToken<FileClaim>(env.SIGNING_KEY, token, env.SIGNING_KEY_PREVIOUS);
  if (claim?.k !== "form_file" || claim.f !== formId || typeof claim.e !== "number" || claim.e < nowMs()) return null;
  if (typeof claim.s !== "string" || typeof claim.i !== "string") return null;
  return { submissionId: claim.s, fileId: claim.i };
}

/** A file name safe in a header: letters, digits, `.`, `-`, `_`; at most 100 characters. */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  const safe = base
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^\.+/, "")
    .slice(0, 100);
  return safe || "file";
}

/** The one answer that serves a file: an attachment, never rendered, never sniffed. */
export function attachmentResponse(body: ReadableStream, file: StoredFile): Response {
  return new Response(body, {
    headers: {
      "content-type": "application/octet-stream",
      "content-disposition": `attachment; filename="${safeFileName(file.name)}"`,
      "content-length": String(file.size),
      "x-content-type-options": "nosniff",
      "content-security-policy": "sandbox",
      "cache-control": "private, no-store",
      "cross-origin-resource-policy": "same-origin",
    },
  });
}
