// Accepting a public post (no Hono context): a filled honeypot is kept as spam with no unit, no
// mail and no webhook (its unit given back); anything else is checked against the form (422 with every problem), then
// accepted the platform's one way (jobs/accept.ts) with the `submissions` unit that forms.limits.ts
// admitPost took beside the form's caps (the monthly-quota 429 before the body is read), the files put in R2 and the submission stored in
// the form's store (its webhook delivery with it, sent by the store's alarm), then the
// notification mail from the request's background. A failed store gives the unit back and
// removes the files it put.
import type { Env } from "../../env";
import { nowIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { accept, type Background } from "../../platform/jobs/accept";
import { keepAliveFrom } from "../../platform/jobs/commit";
import { fileKey, type StoredFile } from "./forms.files";
import { checkFields, IntakeError, storedFields, type Intake } from "./forms.intake";
import { notifyRecipients } from "./forms.notify";
import type { PublicForm } from "./forms.service";
import { addSubmission, ownerOf } from "./forms.store";
import type { StoredSubmission } from "./store/form-store";

export interface Accepted {
  id: string;
  spam: boolean;
}

/**
 * Stores a post for `form` whose unit `admitPost` took; throws IntakeError (422) with what to fix.
 * A post refused here or kept as spam gives its unit back (`giveBack`), and accept gives it back
 * the same way when the store fails.
 */
export async function submitForm(
  env: Env,
  form: PublicForm,
  intake: Intake,
  origin: string | null,
  background: Background | null,
  giveBack: () => Promise<void>,
): Promise<Accepted> {
  const id = crypto.randomUUID();
  const createdAt = nowIso();
  const base = { id, subject: intake.subject, reply_to: intake.replyTo, origin, created_at: createdAt };
  if (intake.gotcha) {
    // Answered exactly as a success; its files are not kept (a bot's uploads cost no storage).
    const fields = JSON.stringify(storedFields(intake, form.fields));
    await Promise.all([addSubmission(env, ownerOf(form), { ...base, status: "spam", fields, files: "[]" }, false, keepAliveFrom(background)), giveBack()]);
    return { id, spam: true };
  }
  const problems = checkFields(intake, form.fields);
  if (problems.length > 0) {
    await giveBack();
    throw new IntakeError(422, problems[0]!.code, "Some fields need fixing", problems);
  }

  const fields = storedFields(intake, form.fields);
  const declaredFiles = form.fields ? new Set(form.fields.filter((f) => f.type === "file").map((f) => f.name)) : null;
  const kept = intake.files.filter((f) => !declaredFiles || declaredFiles.has(f.field));
  const files: StoredFile[] = kept.map((f) => ({
    id: crypto.randomUUID(),
    field: f.field,
    name: f.name.slice(0, 255),
    content_type: f.contentType,
    size: f.bytes.length,
  }));
  const row: StoredSubmission = { ...base, status: "inbox", fields: JSON.stringify(fields), files: JSON.stringify(files) };
  const owner = { teamId: form.teamId, plan: form.plan, ownerEmail: form.ownerEmail };

  await accept({
    name: "form submission",
    env,
    quota: { owner, service: "forms", units: 1, reserved: giveBack },
    store: async () => {
      const keys = files.map((f) => fileKey(form.id, id, f.id));
      try {
        await Promise.all(kept.map((f, i) => env.FORM_FILES.put(keys[i]!, f.bytes, { customMetadata: { name: files[i]!.name } })));
        await addSubmission(env, ownerOf(form), row, form.webhookUrl !== null && form.webhookSecret !== null, keepAliveFrom(background));
      } catch (error) {
        if (keys.length > 0) await env.FORM_FILES.delete(keys).catch(() => {});
        throw error;
      }
      return id;
    },
    unavailable: () => new ApiError("unavailable", "The submission could not be stored; try again"),
    attempt: () => notifyRecipients(env, owner, form, { id, fields, files, subject: intake.subject, replyTo: intake.replyTo, createdAt }),
    background,
  });
  return { id, spam: false };
}
