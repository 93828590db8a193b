// Submissions of a form, read and changed through its store: the list (inbox or spam, newest
// first, cursor paging), one submission, deletion (with its files), the spam / not-spam moves, the
// CSV export of the inbox streamed page by page, a file as an attachment, and the webhook's
// deliveries with their attempts and the re-send. Every call first loads the form for the team.
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { csvAttachment, csvRow, type CsvValue } from "../../platform/csv";
import { decodeCursor, encodeCursor } from "../../platform/cursor";
import { ApiError } from "../../platform/errors";
import { log } from "../../platform/log";
import { orNotFound } from "../../platform/tenancy";
import { attachmentResponse, fileKey, type StoredFile } from "./forms.files";
import type { SubmissionStatus } from "./forms.schemas";
import { FormErrors, loadForm } from "./forms.service";
import { formStore } from "./forms.store";
import type { FormRow } from "../../db/schema/forms";
import type { StoredSubmission } from "./store/form-store";

export function submissionView(formId: string, s: StoredSubmission) {
  return {
    id: s.id,
    form_id: formId,
    status: s.status,
    fields: JSON.parse(s.fields) as Record<string, string | string[]>,
    files: JSON.parse(s.files) as StoredFile[],
    subject: s.subject,
    reply_to: s.reply_to,
    origin: s.origin,
    created_at: s.created_at,
  };
}
export type SubmissionView = ReturnType<typeof submissionView>;

const CURSOR = /^(\d{1,15})$/;

function cursorSeq(cursor: string | undefined): number | null {
  return cursor ? Number(decodeCursor(cursor, CURSOR)[1]) : null;
}

export async function listSubmissions(env: Env, teamId: string, formId: string, q: { status: SubmissionStatus; cursor?: string; limit: number }) {
  const form = await loadForm(getDb(env.DB), teamId, formId);
  const page = await formStore(env, form.id).page(q.status, q.limit, cursorSeq(q.cursor));
  return {
    data: page.rows.map((s) => submissionView(form.id, s)),
    pagination: { next_cursor: page.next === null ? null : encodeCursor(String(page.next)), has_more: page.next !== null },
  };
}

async function loadSubmission(env: Env, teamId: string, formId: string, sid: string): Promise<{ form: FormRow; s: StoredSubmission }> {
  const form = await loadForm(getDb(env.DB), teamId, formId);
  const s = orNotFound(await formStore(env, form.id).get(sid), FormErrors.submission);
  return { form, s };
}

export async function getSubmission(env: Env, teamId: string, formId: string, sid: string): Promise<SubmissionView> {
  const { form, s } = await loadSubmission(env, teamId, formId, sid);
  return submissionView(form.id, s);
}

export async function deleteSubmission(env: Env, teamId: string, formId: string, sid: string): Promise<void> {
  const form = await loadForm(getDb(env.DB), teamId, formId);
  if (!(await formStore(env, form.id).remove(sid))) throw FormErrors.submission();
}

/** Moves a submission to spam or back to the inbox. Moving never sends mail or a webhook, nor spends a unit. */
export async function moveSubmission(env: Env, teamId: string, formId: string, sid: string, status: SubmissionStatus): Promise<SubmissionView> {
  const form = await loadForm(getDb(env.DB), teamId, formId);
  const moved = orNotFound(await formStore(env, form.id).move(sid, status), FormErrors.submission);
  return submissionView(form.id, moved);
}

/** Rows per store call of the export. */
const EXPORT_PAGE = 200;

/**
 * The inbox as CSV (platform/csv.ts: RFC 4180, formulas neutralised), newest first, streamed one
 * store page at a time. Columns: id, created_at, the declared fields (or every name seen, in the
 * order first met on the first page), subject, reply_to, files; a list is joined with "; ".
 */
export async function exportSubmissions(env: Env, teamId: string, formId: string): Promise<Response> {
  const form = await loadForm(getDb(env.DB), teamId, formId);
  const store = formStore(env, form.id);
  const first = await store.exportPage(null, EXPORT_PAGE);
  const names = form.fields
    ? form.fields.filter((f) => f.type !== "file").map((f) => f.name)
    : [...new Set(first.rows.flatMap((r) => Object.keys(JSON.parse(r.fields) as object)))];
  const encoder = new TextEncoder();
  const line = (s: StoredSubmission) => {
    const fields = JSON.parse(s.fields) as Record<string, string | string[]>;
    const files = (JSON.parse(s.files) as StoredFile[]).map((f) => f.name).join("; ");
    const cells: CsvValue[] = [s.id, s.created_at, ...names.map((n) => joined(fields[n])), s.subject, s.reply_to, files];
    return csvRow(cells);
  };
  let next = first.next;
  let pending: StoredSubmission[] | null = first.rows;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (pending) {
          const header = pending === first.rows ? csvRow(["id", "created_at", ...names, "subject", "reply_to", "files"]) : "";
          controller.enqueue(encoder.encode(header + pending.map(line).join("")));
          pending = null;
          return;
        }
        if (next === null) return controller.close();
        const page = await store.exportPage(next, EXPORT_PAGE);
        next = page.next;
        controller.enqueue(encoder.encode(page.rows.map(line).join("")));
      } catch (error) {
        log.error("form export failed mid-stream", { form_id: form.id, error: String(error) });
        controller.error(error);
      }
    },
  });
  return csvAttachment(`form-${form.id}-inbox.csv`, stream);
}

function joined(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join("; ") : value;
}

/** A submission's file as an attachment (files.ts headers); 404 when the file is not the submission's. */
export async function submissionFile(env: Env, form: Pick<FormRow, "id">, s: StoredSubmission, fileId: string): Promise<Response> {
  const file = (JSON.parse(s.files) as StoredFile[]).find((f) => f.id === fileId);
  if (!file) throw ApiError.notFound("File not found");
  const object = await env.FORM_FILES.get(fileKey(form.id, s.id, file.id));
  if (!object) throw ApiError.notFound("File not found");
  return attachmentResponse(object.body, file);
}

export async function getSubmissionFile(env: Env, teamId: string, formId: string, sid: string, fileId: string): Promise<Response> {
  const { form, s } = await loadSubmission(env, teamId, formId, sid);
  return submissionFile(env, form, s, fileId);
}

/** The form's latest webhook deliveries (or one submission's), newest first, with every attempt. */
export async function listDeliveries(env: Env, teamId: string, formId: string, sid: string | null) {
  const form = await loadForm(getDb(env.DB), teamId, formId);
  if (sid !== null) orNotFound(await formStore(env, form.id).get(sid), FormErrors.submission);
  return formStore(env, form.id).deliveries(sid);
}

/** Sends a submission to the webhook again (a new delivery, due now). 422 without a webhook or for spam. */
export async function resendSubmission(env: Env, teamId: string, formId: string, sid: string): Promise<{ delivery_id: string }> {
  const { form, s } = await loadSubmission(env, teamId, formId, sid);
  if (!form.webhookUrl) throw ApiError.validation({ webhook_url: ["the form has no webhook"] });
  if (s.status !== "inbox") throw ApiError.validation({ status: ["a submission in spam is not sent; move it to the inbox first"] });
  const id = await formStore(env, form.id).resend(s.id);
  if (!id) throw FormErrors.submission();
  return { delivery_id: id };
}
