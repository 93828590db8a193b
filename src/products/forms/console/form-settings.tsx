/** @jsxImportSource hono/jsx */
// A form's settings in the console: every setting of the API (name, on/off, declared fields,
// allowed origins, redirect, notification recipients, webhook, files, retention), the same inputs
// for creating a form (forms-pages.tsx) and for editing one at `forms/:form_id/settings`, and
// deleting a form. Post/redirect/get: a refused post re-renders at 422 naming each field and
// stores nothing (the API's schemas and services decide, so the rules are the API's); a webhook
// secret the service makes is shown once through the flash. Viewers read the settings only.
import { Hono, type Context } from "hono";
import { formList, formText } from "../../../console/forms";
import { redirectWithFlash, takeFlash } from "../../../console/flash";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import type { FormField } from "../../../db/schema/forms";
import { ApiError, zodDetails, type FieldErrors } from "../../../platform/errors";
import { FIELD_TYPES, MAX_FILES_BYTES, PatchFormBody, RETENTION_DEFAULT_DAYS, RETENTION_MAX_DAYS } from "../forms.schemas";
import { deleteForm, getForm, patchForm, type FormView } from "../forms.service";

export const settingsPages = new Hono<ConsoleEnv>();

const MB = 1024 * 1024;

/** The settings as the inputs hold them (text, so a refused post shows what was typed). */
export interface SettingsDraft {
  name: string;
  enabled: boolean;
  fields: string;
  allowed_origins: string;
  redirect_url: string;
  notify_emails: string;
  webhook_url: string;
  files_enabled: boolean;
  files_max_mb: string;
  retention_days: string;
}

export const EMPTY_DRAFT: SettingsDraft = {
  name: "",
  enabled: true,
  fields: "",
  allowed_origins: "",
  redirect_url: "",
  notify_emails: "",
  webhook_url: "",
  files_enabled: false,
  files_max_mb: String(MAX_FILES_BYTES / MB),
  retention_days: String(RETENTION_DEFAULT_DAYS),
};

/** A declared field as a line of the fields box: `name | type | required | max 500`. */
function fieldLine(f: FormField): string {
  return [f.name, f.type, ...(f.required ? ["required"] : []), ...(f.max_length ? [`max ${f.max_length}`] : [])].join(" | ");
}

export function draftOf(form: FormView): SettingsDraft {
  return {
    name: form.name,
    enabled: form.enabled,
    fields: (form.fields ?? []).map(fieldLine).join("\n"),
    allowed_origins: form.allowed_origins.join("\n"),
    redirect_url: form.redirect_url ?? "",
    notify_emails: form.notify_emails.join("\n"),
    webhook_url: form.webhook_url ?? "",
    files_enabled: form.files.enabled,
    files_max_mb: String(Math.round((form.files.max_bytes / MB) * 1000) / 1000),
    retention_days: String(form.retention_days),
  };
}

/** The number typed, or the text itself so the schema names the field ("expected number"). */
const numberOr = (text: string): number | string => (text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text);
const list = (text: string) => text.split(/[\s,;]+/).filter(Boolean);

/**
 * The fields box, one field a line (`name | type | required | max 500`; type defaults to text):
 * the API's field definitions, or the line's problem under `fields.<index>`. An empty box is null
 * (any fields are taken).
 */
function parseFields(text: string): { fields: unknown[] | null; errors: FieldErrors } {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const errors: FieldErrors = {};
  if (lines.length === 0) return { fields: null, errors };
  const fields = lines.map((line, i) => {
    const [name = "", type = "text", ...flags] = line.split("|").map((part) => part.trim());
    const field: Record<string, unknown> = { name, type: type.toLowerCase() || "text", required: false, max_length: null };
    for (const flag of flags.filter(Boolean)) {
      const max = /^max(?:_length)?\s*:?\s*(\d+)$/i.exec(flag);
      if (/^required$/i.test(flag)) field.required = true;
      else if (/^optional$/i.test(flag)) field.required = false;
      else if (max) field.max_length = Number(max[1]);
      else errors[`fields.${i}`] = [`"${flag}" is neither required, optional nor max <characters>`];
    }
    return field;
  });
  return { fields, errors };
}

/**
 * The posted settings as the API's body, with the draft to show again and the problems found
 * before the schema. Only the settings the post carries are in the body (an edit changes those,
 * a create leaves the others to the API's defaults); a checkbox is carried by a hidden "off"
 * beside it, so an unticked box is a setting too.
 */
export async function readSettings(
  c: Context<ConsoleEnv>,
  base: SettingsDraft = EMPTY_DRAFT,
): Promise<{ draft: SettingsDraft; body: Record<string, unknown>; errors: FieldErrors }> {
  const body: Record<string, unknown> = {};
  const draft: SettingsDraft = { ...base };
  const text = async <K extends keyof SettingsDraft>(name: K): Promise<string | null> => {
    if ((await formList(c, name)).length === 0) return null;
    const value = await formText(c, name);
    (draft as unknown as Record<string, unknown>)[name] = value;
    return value;
  };
  const box = async (name: "enabled" | "files_enabled"): Promise<boolean | null> => {
    const values = await formList(c, name);
    if (values.length === 0) return null;
    draft[name] = values.includes("on");
    return draft[name];
  };
  const errors: FieldErrors = {};
  const name = await text("name");
  if (name !== null) body.name = name;
  const enabled = await box("enabled");
  if (enabled !== null) body.enabled = enabled;
  const fields = await text("fields");
  if (fields !== null) {
    const parsed = parseFields(fields);
    body.fields = parsed.fields;
    Object.assign(errors, parsed.errors);
  }
  const origins = await text("allowed_origins");
  if (origins !== null) body.allowed_origins = list(origins);
  const redirect = await text("redirect_url");
  if (redirect !== null) body.redirect_url = redirect.trim() || null;
  const notify = await text("notify_emails");
  if (notify !== null) body.notify_emails = list(notify);
  const webhook = await text("webhook_url");
  if (webhook !== null) body.webhook_url = webhook.trim() || null;
  const files: Record<string, unknown> = {};
  const filesEnabled = await box("files_enabled");
  if (filesEnabled !== null) files.enabled = filesEnabled;
  const mb = await text("files_max_mb");
  if (mb !== null && mb.trim() !== "") {
    const value = numberOr(mb);
    files.max_bytes = typeof value === "number" ? Math.round(value * MB) : value;
  }
  if (Object.keys(files).length > 0) body.files = files;
  const retention = await text("retention_days");
  if (retention !== null && retention.trim() !== "") body.retention_days = numberOr(retention);
  return { draft, body, errors };
}

const LABELS: Record<string, string> = {
  name: "Name",
  enabled: "Accepting posts",
  fields: "Fields",
  allowed_origins: "Allowed sites",
  redirect_url: "Redirect",
  notify_emails: "Notification mail",
  webhook_url: "Webhook URL",
  files: "Files",
  retention_days: "Keep submissions",
  _body: "Form",
};

/** `fields.2.name` → "Fields, line 3 (name)"; `allowed_origins.0` → "Allowed sites, entry 1"; `files.max_bytes` → "Files (max bytes)". */
function labelOf(key: string): string {
  const [head = "", ...rest] = key.split(".");
  const label = LABELS[head] ?? head.replace(/_/g, " ");
  if (rest[0] !== undefined && /^\d+$/.test(rest[0])) {
    // A line of the fields box, or an entry of a list box.
    const [index, ...more] = rest;
    const where = head === "fields" ? "line" : "entry";
    return `${label}, ${where} ${Number(index) + 1}${more.length ? ` (${more.join(" ").replace(/_/g, " ")})` : ""}`;
  }
  return rest.length ? `${label} (${rest.join(" ").replace(/_/g, " ")})` : label;
}

export function SettingsErrors(props: { errors?: FieldErrors }) {
  if (!props.errors || Object.keys(props.errors).length === 0) return null;
  return (
    <div class="errors" role="alert" data-testid="form-errors">
      <p>Nothing was saved. Fix these and send again:</p>
      <ul>
        {Object.entries(props.errors).map(([key, messages]) => (
          <li data-field={key}>
            {labelOf(key)}: {messages.join("; ")}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Every setting's input; `id` prefixes the inputs' ids (one create form per page, one edit form). */
export function SettingsInputs(props: { id: string; draft: SettingsDraft }) {
  const d = props.draft;
  const id = (name: string) => `${props.id}-${name}`;
  return (
    <>
      <div class="field">
        <label for={id("name")}>Name</label>
        <input id={id("name")} type="text" name="name" required maxlength={200} value={d.name} placeholder="Contact" />
      </div>
      <div class="field">
        <input type="hidden" name="enabled" value="off" />
        <label class="check">
          <input type="checkbox" name="enabled" value="on" checked={d.enabled} /> Accepting posts (off: posts answer 404)
        </label>
      </div>
      <div class="field">
        <label for={id("fields")}>Fields (optional, one a line: name | type | required | max characters)</label>
        <textarea
          id={id("fields")}
          name="fields"
          rows={4}
          placeholder={"email | email | required\nmessage | text | max 2000"}
          aria-describedby={id("fields-hint")}
        >
          {d.fields}
        </textarea>
        <p class="hint muted small" id={id("fields-hint")}>
          Types: {FIELD_TYPES.join(", ")}. Empty: any fields are taken (up to 50); with fields, others are dropped.
        </p>
      </div>
      <div class="field">
        <label for={id("origins")}>Only accept posts from these sites (optional, one origin a line)</label>
        <textarea id={id("origins")} name="allowed_origins" rows={2} placeholder="https://example.com">
          {d.allowed_origins}
        </textarea>
      </div>
      <div class="field">
        <label for={id("redirect")}>After a post, send visitors to (optional)</label>
        <input id={id("redirect")} type="url" name="redirect_url" maxlength={2048} value={d.redirect_url} placeholder="https://example.com/thanks" />
      </div>
      <div class="field">
        <label for={id("notify")}>Mail each submission to (optional, members of the team, one a line)</label>
        <textarea id={id("notify")} name="notify_emails" rows={2} placeholder="you@example.com">
          {d.notify_emails}
        </textarea>
      </div>
      <div class="field">
        <label for={id("webhook")}>Webhook URL (optional; deliveries are signed, the secret is shown once)</label>
        <input id={id("webhook")} type="url" name="webhook_url" maxlength={2048} value={d.webhook_url} placeholder="https://example.com/hooks/forms" />
      </div>
      <div class="field">
        <input type="hidden" name="files_enabled" value="off" />
        <label class="check">
          <input type="checkbox" name="files_enabled" value="on" checked={d.files_enabled} /> Accept file uploads (stored in R2, served only as downloads)
        </label>
      </div>
      <div class="field">
        <label for={id("files-max")}>Largest total of a submission's files (MB, up to {MAX_FILES_BYTES / MB})</label>
        <input id={id("files-max")} type="number" name="files_max_mb" min="0.001" max={MAX_FILES_BYTES / MB} step="any" value={d.files_max_mb} />
      </div>
      <div class="field">
        <label for={id("retention")}>Keep submissions for (days, 1 to {RETENTION_MAX_DAYS})</label>
        <input id={id("retention")} type="number" name="retention_days" min="1" max={RETENTION_MAX_DAYS} step="1" value={d.retention_days} />
      </div>
    </>
  );
}

/** The flash of a webhook secret made by a create or an edit. */
export type WebhookSecretFlash = { url: string; secret: string };

/** The new webhook secret, shown this once. */
export function NewWebhookSecret(props: { flash: WebhookSecretFlash }) {
  return (
    <section class="section" aria-labelledby="webhook-secret-title">
      <h2 id="webhook-secret-title">Webhook signing secret</h2>
      <p>
        Deliveries to <code class="wrap">{props.flash.url}</code> are signed with this secret (Standard Webhooks headers <code>webhook-id</code>,{" "}
        <code>webhook-timestamp</code>, <code>webhook-signature</code>).
      </p>
      <p class="warning">Copy it now. It is shown only this once.</p>
      <div class="secret">
        <code id="webhook-secret" data-testid="webhook-secret">
          {props.flash.secret}
        </code>
        <button type="button" class="secondary small" data-copy="#webhook-secret" hidden>
          Copy
        </button>
      </div>
    </section>
  );
}

function Summary(props: { form: FormView }) {
  const d = draftOf(props.form);
  const rows: Array<[string, string]> = [
    ["Name", d.name],
    ["Accepting posts", d.enabled ? "yes" : "no"],
    ["Fields", d.fields || "any (up to 50)"],
    ["Allowed sites", d.allowed_origins || "any"],
    ["Redirect", d.redirect_url || "the hosted thank-you page"],
    ["Notification mail", d.notify_emails || "none"],
    ["Webhook URL", d.webhook_url || "none"],
    ["Files", d.files_enabled ? `accepted, up to ${d.files_max_mb} MB a submission` : "not accepted"],
    ["Keep submissions", `${d.retention_days} days`],
  ];
  return (
    <dl class="facts" data-testid="form-settings-summary">
      {rows.map(([term, value]) => (
        <>
          <dt>{term}</dt>
          <dd>{value.replace(/\n/g, "; ")}</dd>
        </>
      ))}
    </dl>
  );
}

const NOTICES = { saved: "Settings saved.", "saved-webhook": "Settings saved. Copy the webhook's signing secret below." };

async function settingsPage(c: Context<ConsoleEnv>, form: FormView, extra: { draft?: SettingsDraft; errors?: FieldErrors } = {}, status: 200 | 422 = 200) {
  const canWrite = roleAtLeast(c.get("consoleTeam").role, "developer");
  const flash = status === 200 ? await takeFlash<WebhookSecretFlash>(c, "saved-webhook") : null;
  const base = teamPath(c, `forms/${form.id}`);
  return page(
    c,
    { title: `${form.name}: settings`, active: "forms", notices: NOTICES, status },
    <>
      <p class="breadcrumbs small">
        <a href={teamPath(c, "forms")}>Forms</a> / <a href={base}>{form.name}</a> / Settings
      </p>
      {flash ? <NewWebhookSecret flash={flash} /> : null}
      {canWrite ? (
        <>
          <form method="post" action={`${base}/settings`} class="section" data-testid="form-settings">
            <h2>Settings</h2>
            <SettingsErrors errors={extra.errors} />
            <SettingsInputs id="edit" draft={extra.draft ?? draftOf(form)} />
            <button type="submit">Save settings</button>
          </form>
          <form method="post" action={`${base}/delete`} class="section" data-testid="delete-form">
            <h2>Delete this form</h2>
            <p class="muted">Its submissions, files and webhook deliveries are deleted with it; posts to its address answer 404.</p>
            <button type="submit" class="danger">
              Delete form
            </button>
          </form>
        </>
      ) : (
        <section class="section">
          <h2>Settings</h2>
          <Summary form={form} />
          <p class="muted small">A developer, admin or owner of the team changes them.</p>
        </section>
      )}
    </>,
  );
}

settingsPages.get("/forms/:form_id/settings", async (c) => settingsPage(c, await getForm(c.env, c.get("consoleTeam").id, c.req.param("form_id"))));

settingsPages.post("/forms/:form_id/settings", async (c) => {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const form = await getForm(c.env, teamId, c.req.param("form_id"));
  const { draft, body, errors } = await readSettings(c, draftOf(form));
  const parsed = PatchFormBody.safeParse(body);
  if (!parsed.success || Object.keys(errors).length > 0) {
    return settingsPage(c, form, { draft, errors: { ...errors, ...(parsed.success ? {} : zodDetails(parsed.error)) } }, 422);
  }
  try {
    const saved = await patchForm(c.env, teamId, form.id, parsed.data);
    if ("webhook_secret" in saved && saved.webhook_secret && saved.webhook_url) {
      return redirectWithFlash(c, `forms/${form.id}/settings`, "saved-webhook", {
        url: saved.webhook_url,
        secret: saved.webhook_secret,
      } satisfies WebhookSecretFlash);
    }
    return redirectTo(c, `forms/${form.id}/settings`, "saved");
  } catch (error) {
    if (error instanceof ApiError && error.code === "validation") return settingsPage(c, form, { draft, errors: error.details }, 422);
    throw error;
  }
});

settingsPages.post("/forms/:form_id/delete", async (c) => {
  requireRole(c, "developer");
  await deleteForm(c.env, c.get("consoleTeam").id, c.req.param("form_id"));
  return redirectTo(c, "forms", "deleted");
});

settingsPages.get("/forms/:form_id/delete", (c) => c.redirect(teamPath(c, `forms/${c.req.param("form_id")}/settings`), 303));
