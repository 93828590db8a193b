// Forms over D1: create (capped per team, webhook secret made and sealed, shown once), list and
// read with their store's counts, change, delete (the store and its files with it). Every query
// filters on the team; no Hono context here. The public endpoint's look-up (by id alone, through
// an isolate cache of a few seconds) is here too, with the team's plan for the quota.
import { and, asc, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb, type Db } from "../../db/client";
import { teams } from "../../db/schema";
import { insertUnderCap } from "../../platform/caps";
import { nowIso } from "../../platform/clock";
import { settings } from "../../platform/config";
import { ApiError } from "../../platform/errors";
import { IsolateCache } from "../../platform/isolate-cache";
import { assertPublicUrl } from "../../platform/ssrf";
import { isTeamMailRecipient } from "../../platform/team-members";
import { ownedBy, ownedRow, orNotFound, uuidOr404 } from "../../platform/tenancy";
import { newSealedWebhookSecret } from "../../platform/webhook-signature";
import { MAX_FORMS_PER_TEAM, type CreateFormInput, type PatchFormInput } from "./forms.schemas";
import { formStore, ownerOf } from "./forms.store";
import { forms, type FormRow } from "../../db/schema/forms";

export const FormErrors = { form: () => ApiError.notFound("Form not found"), submission: () => ApiError.notFound("Submission not found") };

type Counts = { inbox: number; spam: number };

export function formView(env: Env, row: FormRow, counts: Counts) {
  return {
    id: row.id,
    name: row.name,
    endpoint: `${settings(env).appUrl}/f/${row.id}`,
    fields: row.fields,
    allowed_origins: row.allowedOrigins,
    redirect_url: row.redirectUrl,
    notify_emails: row.notifyEmails,
    webhook_url: row.webhookUrl,
    files: { enabled: row.filesEnabled, max_bytes: row.filesMaxBytes },
    retention_days: row.retentionDays,
    enabled: row.enabled,
    submission_count: counts.inbox,
    spam_count: counts.spam,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
export type FormView = ReturnType<typeof formView>;

/** Notification mail goes only to accepted members of the team (as alert emails): 422 naming the address otherwise. */
async function checkRecipients(env: Env, teamId: string, emails: string[]): Promise<string[]> {
  const addresses = [...new Set(emails.map((e) => e.trim().toLowerCase()))];
  const members = await Promise.all(addresses.map((a) => isTeamMailRecipient(env.DB, teamId, a)));
  const strangers = addresses.filter((_, i) => !members[i]);
  if (strangers.length > 0) {
    throw ApiError.validation({
      notify_emails: strangers.map((a) => `${a} is not a member of the team who has accepted; only members receive form notifications`),
    });
  }
  return addresses;
}

export async function loadForm(db: Db, teamId: string, id: string): Promise<FormRow> {
  const [row] = await db
    .select()
    .from(forms)
    .where(ownedRow(forms, teamId, uuidOr404(id, FormErrors.form)));
  return orNotFound(row, FormErrors.form);
}

async function countsOf(env: Env, formId: string): Promise<Counts> {
  return formStore(env, formId).counts();
}

export async function createForm(env: Env, teamId: string, input: CreateFormInput) {
  const db = getDb(env.DB);
  if (input.webhook_url) assertPublicUrl(env, input.webhook_url, "webhook_url");
  const notify = await checkRecipients(env, teamId, input.notify_emails);
  const sealed = input.webhook_url ? await newSealedWebhookSecret(env.ENCRYPTION_KEY) : null;
  const at = nowIso();
  const row: FormRow = {
    id: crypto.randomUUID(),
    teamId,
    name: input.name,
    fields: input.fields ?? null,
    allowedOrigins: [...new Set(input.allowed_origins)],
    redirectUrl: input.redirect_url,
    notifyEmails: notify,
    webhookUrl: input.webhook_url,
    webhookSecret: sealed?.sealed ?? null,
    filesEnabled: input.files.enabled,
    filesMaxBytes: input.files.max_bytes,
    retentionDays: input.retention_days,
    enabled: input.enabled,
    createdAt: at,
    updatedAt: at,
  };
  if (!(await insertUnderCap(db, forms, row, { column: forms.teamId, value: teamId }, MAX_FORMS_PER_TEAM))) {
    throw ApiError.validation({ name: [`the team has reached the limit of ${MAX_FORMS_PER_TEAM} forms`] });
  }
  return { ...formView(env, row, { inbox: 0, spam: 0 }), webhook_secret: sealed?.secret ?? null };
}

/** Every form of the team (at most MAX_FORMS_PER_TEAM), oldest first, each with its store's counts. */
export async function listForms(env: Env, teamId: string): Promise<FormView[]> {
  const rows = await getDb(env.DB).select().from(forms).where(ownedBy(forms, teamId)).orderBy(asc(forms.createdAt), asc(forms.id));
  const counts = await Promise.all(rows.map((r) => countsOf(env, r.id)));
  return rows.map((r, i) => formView(env, r, counts[i]!));
}

export async function getForm(env: Env, teamId: string, id: string): Promise<FormView> {
  const row = await loadForm(getDb(env.DB), teamId, id);
  return formView(env, row, await countsOf(env, row.id));
}

/** Changes a form; a webhook set where none was gets a new secret, answered here once (`webhook_secret`). */
export async function patchForm(env: Env, teamId: string, id: string, input: PatchFormInput) {
  const db = getDb(env.DB);
  const current = await loadForm(db, teamId, id);
  const changes: Partial<FormRow> = { updatedAt: nowIso() };
  let secret: string | null = null;
  if (input.name !== undefined) changes.name = input.name;
  if (input.fields !== undefined) changes.fields = input.fields;
  if (input.allowed_origins !== undefined) changes.allowedOrigins = [...new Set(input.allowed_origins)];
  if (input.redirect_url !== undefined) changes.redirectUrl = input.redirect_url;
  if (input.notify_emails !== undefined) changes.notifyEmails = await checkRecipients(env, teamId, input.notify_emails);
  if (input.webhook_url !== undefined) {
    changes.webhookUrl = input.webhook_url;
    if (input.webhook_url === null) changes.webhookSecret = null;
    else {
      assertPublicUrl(env, input.webhook_url, "webhook_url");
      if (!current.webhookSecret) {
        const sealed = await newSealedWebhookSecret(env.ENCRYPTION_KEY);
        changes.webhookSecret = sealed.sealed;
        secret = sealed.secret;
      }
    }
  }
  if (input.files?.enabled !== undefined) changes.filesEnabled = input.files.enabled;
  if (input.files?.max_bytes !== undefined) changes.filesMaxBytes = input.files.max_bytes;
  if (input.retention_days !== undefined) changes.retentionDays = input.retention_days;
  if (input.enabled !== undefined) changes.enabled = input.enabled;
  const [row] = await db
    .update(forms)
    .set(changes)
    .where(ownedRow(forms, teamId, current.id))
    .returning();
  const updated = orNotFound(row, FormErrors.form);
  publicForms.delete(updated.id);
  if (input.retention_days !== undefined) await formStore(env, updated.id).configure(ownerOf(updated));
  const view = formView(env, updated, await countsOf(env, updated.id));
  return secret ? { ...view, webhook_secret: secret } : view;
}

/** Deletes a form, then its store (submissions, deliveries) and its files. */
export async function deleteForm(env: Env, teamId: string, id: string): Promise<void> {
  const db = getDb(env.DB);
  const [row] = await db
    .delete(forms)
    .where(ownedRow(forms, teamId, uuidOr404(id, FormErrors.form)))
    .returning({ id: forms.id });
  orNotFound(row, FormErrors.form);
  publicForms.delete(row.id);
  await formStore(env, row.id).destroy(row.id);
}

/** A form as the public endpoint needs it, with its team's plan and owner for the quota. */
export type PublicForm = FormRow & { plan: string; ownerEmail: string | null };

/**
 * Public forms by id, remembered per isolate for a few seconds: a post costs no D1 read while its
 * form is warm. A change made on this isolate is seen at once; on another, within PUBLIC_FORM_TTL_MS.
 */
export const PUBLIC_FORM_TTL_MS = 5_000;
const publicForms = new IsolateCache<PublicForm | "none">({ ttlMs: PUBLIC_FORM_TTL_MS, max: 5_000, teamOf: (f) => (f === "none" ? "" : f.teamId) });

/** The enabled form of a public post; 404 for an unknown id or a disabled form. */
export async function findPublicForm(env: Env, id: string): Promise<PublicForm> {
  uuidOr404(id, FormErrors.form);
  const found = await publicForms.getOrLoad(id, async () => {
    const [row] = await getDb(env.DB)
      .select({ form: forms, plan: teams.plan, ownerEmail: teams.ownerEmail })
      .from(forms)
      .innerJoin(teams, eq(teams.id, forms.teamId))
      .where(and(eq(forms.id, id)));
    return row ? { ...row.form, plan: row.plan, ownerEmail: row.ownerEmail } : "none";
  });
  if (!found || found === "none" || !found.enabled) throw FormErrors.form();
  return found;
}
