/** @jsxImportSource hono/jsx */
// One form in the console at `forms/:form_id`: its endpoint, the HTML snippet to paste and a
// JavaScript fetch example, the inbox and spam (`?status=spam`, cursor paging) with each
// submission's fields as text and its files as attachment links, spam / not-spam moves, the CSV
// export, and the webhook's latest deliveries with their attempts. Visitor text is JSX text: always
// escaped, never rendered as HTML.
import { Hono, type Context } from "hono";
import { takeFlash } from "../../../console/flash";
import { Time } from "../../../console/layout";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { CopyBlock, TableWrap, ColumnHeads } from "../../../console/pages/parts";
import type { FormField } from "../../../db/schema/forms";
import { getForm, type FormView } from "../forms.service";
import {
  deleteSubmission,
  exportSubmissions,
  getSubmissionFile,
  listDeliveries,
  listSubmissions,
  moveSubmission,
  resendSubmission,
  type SubmissionView,
} from "../forms-submissions.service";
import { NewWebhookSecret, type WebhookSecretFlash } from "./form-settings";

export const formPages = new Hono<ConsoleEnv>();

/** Characters of a field value shown in a row. */
const VALUE_EXCERPT = 200;
const PAGE_SIZE = 25;

const INPUT_TYPES: Record<FormField["type"], string> = { text: "text", email: "email", number: "number", url: "url", checkbox: "checkbox", file: "file" };

/** The HTML to paste: the declared fields (or an email and a message), the honeypot, a submit button. */
export function htmlSnippet(form: Pick<FormView, "endpoint" | "fields" | "files">): string {
  const fields: FormField[] = form.fields ?? [
    { name: "email", type: "email", required: true, max_length: null },
    { name: "message", type: "text", required: false, max_length: null },
  ];
  const multipart = form.files.enabled && fields.some((f) => f.type === "file");
  const lines = [`<form action="${form.endpoint}" method="POST"${multipart ? ' enctype="multipart/form-data"' : ""}>`];
  for (const f of fields) {
    const required = f.required ? " required" : "";
    const max = f.max_length ? ` maxlength="${f.max_length}"` : "";
    const input =
      f.name === "message" && !form.fields
        ? `<textarea name="message"${required}></textarea>`
        : `<input type="${INPUT_TYPES[f.type]}" name="${f.name.replace(/"/g, "&quot;")}"${required}${max}>`;
    lines.push(`  <label>${f.name.replace(/[<&]/g, "")} ${input}</label>`);
  }
  lines.push(
    "  <!-- Honeypot: hidden from people, filled by bots. -->",
    '  <input type="text" name="_gotcha" style="display:none" tabindex="-1" autocomplete="off">',
  );
  lines.push('  <button type="submit">Send</button>', "</form>");
  return lines.join("\n");
}

/** The JavaScript fetch example. */
export function fetchSnippet(endpoint: string): string {
  return `const res = await fetch("${endpoint}", {
  method: "POST",
  headers: { "Content-Type": "application/json", Accept: "application/json" },
  body: JSON.stringify({ email: "ada@example.com", message: "Hello" }),
});
const result = await res.json();
// 200 { ok: true, id }, or 422 { ok: false, errors: [{ field, code, message }] }`;
}

function valueText(value: string | string[]): string {
  const text = Array.isArray(value) ? value.join(", ") : value;
  return text.length > VALUE_EXCERPT ? `${text.slice(0, VALUE_EXCERPT - 1)}…` : text;
}

function SubmissionRow(props: { c: Context<ConsoleEnv>; form: FormView; s: SubmissionView; canWrite: boolean }) {
  const { c, form, s } = props;
  const base = teamPath(c, `forms/${form.id}/submissions/${s.id}`);
  return (
    <tr data-testid="submission-row" data-status={s.status}>
      <td>
        <Time iso={s.created_at} />
      </td>
      <td>
        <dl class="facts small">
          {Object.entries(s.fields).map(([name, value]) => (
            <>
              <dt>{name}</dt>
              <dd>{valueText(value)}</dd>
            </>
          ))}
        </dl>
        {s.files.length > 0 ? (
          <ul class="chips">
            {s.files.map((f) => (
              <li>
                <a href={`${base}/files/${f.id}`} download>
                  {f.name}
                </a>{" "}
                <span class="muted small">{f.size.toLocaleString("en-US")} bytes</span>
              </li>
            ))}
          </ul>
        ) : null}
      </td>
      <td>
        {props.canWrite ? (
          <div class="row-actions">
            <form method="post" action={`${base}/${s.status === "spam" ? "not-spam" : "spam"}`}>
              <button type="submit" class="secondary small">
                {s.status === "spam" ? "Not spam" : "Spam"}
              </button>
            </form>
            {form.webhook_url && s.status === "inbox" ? (
              <form method="post" action={`${base}/resend`}>
                <button type="submit" class="secondary small">
                  Re-send webhook
                </button>
              </form>
            ) : null}
            <form method="post" action={`${base}/delete`}>
              <button type="submit" class="danger small">
                Delete
              </button>
            </form>
          </div>
        ) : null}
      </td>
    </tr>
  );
}

const NOTICES = {
  created: "Form created. Paste the snippet below into your page.",
  "created-webhook": "Form created. Copy the webhook's signing secret, then paste the snippet below into your page.",
  moved: "Submission moved.",
  deleted: "Submission deleted, with its files.",
  resent: "A new webhook delivery was made; its attempts are listed below.",
};

formPages.get("/forms/:form_id", async (c) => {
  const team = c.get("consoleTeam");
  const formId = c.req.param("form_id");
  const status = c.req.query("status") === "spam" ? "spam" : "inbox";
  const cursor = c.req.query("cursor") || undefined;
  const form = await getForm(c.env, team.id, formId);
  const [list, deliveries, flash] = await Promise.all([
    listSubmissions(c.env, team.id, form.id, { status, cursor, limit: PAGE_SIZE }),
    listDeliveries(c.env, team.id, form.id, null),
    takeFlash<WebhookSecretFlash>(c, "created-webhook"),
  ]);
  const canWrite = roleAtLeast(team.role, "developer");
  const base = teamPath(c, `forms/${form.id}`);
  return page(
    c,
    { title: form.name, active: "forms", notices: NOTICES },
    <>
      <p class="breadcrumbs small">
        <a href={teamPath(c, "forms")}>Forms</a> / {form.name} /{" "}
        <a href={`${base}/settings`} data-testid="form-settings-link">
          Settings
        </a>
      </p>
      {flash ? <NewWebhookSecret flash={flash} /> : null}
      <section class="section">
        <h2>Endpoint</h2>
        <CopyBlock id="form-endpoint" text={form.endpoint} />
        <p class="small muted">
          {form.enabled ? "Accepting posts." : "Disabled: posts answer 404."} Submissions are kept {form.retention_days} days.{" "}
          {form.allowed_origins.length ? `Only from ${form.allowed_origins.join(", ")}.` : "From any site."}
        </p>
        <h3>HTML</h3>
        <CopyBlock id="form-html" text={htmlSnippet(form)} />
        <h3>JavaScript</h3>
        <CopyBlock id="form-fetch" text={fetchSnippet(form.endpoint)} />
      </section>
      <section class="section" aria-labelledby="submissions-title">
        <h2 id="submissions-title">Submissions</h2>
        <nav class="tabs" aria-label="Inbox and spam">
          <a href={base} aria-current={status === "inbox" ? "page" : undefined}>
            Inbox ({form.submission_count})
          </a>{" "}
          <a href={`${base}?status=spam`} aria-current={status === "spam" ? "page" : undefined}>
            Spam ({form.spam_count})
          </a>{" "}
          <a href={`${base}/export`} class="button secondary small" data-testid="export-csv">
            Export inbox as CSV
          </a>
        </nav>
        {list.data.length === 0 ? (
          <p class="muted" data-testid="submissions-empty">
            {status === "spam" ? "No spam." : "No submissions yet. Post the form above, or send the fetch example."}
          </p>
        ) : (
          <TableWrap label={`Submissions: ${status}`}>
            <table class="stack">
              <caption class="skip">Submissions, newest first</caption>
              <ColumnHeads names={["Received", "Fields (written by visitors)", "Actions"]} />
              <tbody>
                {list.data.map((s) => (
                  <SubmissionRow c={c} form={form} s={s} canWrite={canWrite} />
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
        <nav class="pager" aria-label="Pages">
          {cursor ? <a href={status === "spam" ? `${base}?status=spam` : base}>Newest</a> : null}
          {list.pagination.next_cursor ? (
            <a href={`${base}?${status === "spam" ? "status=spam&" : ""}cursor=${encodeURIComponent(list.pagination.next_cursor)}`} rel="next">
              Older
            </a>
          ) : null}
        </nav>
      </section>
      <section class="section" aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Webhook deliveries</h2>
        {!form.webhook_url ? (
          <p class="muted">
            No webhook. Add one in the form's <a href={`${base}/settings`}>settings</a>.
          </p>
        ) : null}
        {deliveries.length === 0 ? null : (
          <TableWrap label="Webhook deliveries">
            <table class="stack">
              <caption class="skip">Latest webhook deliveries, newest first</caption>
              <ColumnHeads names={["Created", "Submission", "Status", "Attempts", "Last answer"]} />
              <tbody>
                {deliveries.map((d) => {
                  const last = d.attempts.at(-1);
                  const tone = d.status === "delivered" ? "ok" : d.status === "failed" ? "danger" : "warn";
                  return (
                    <tr data-testid="delivery-row" data-status={d.status}>
                      <td>
                        <Time iso={d.created_at} />
                      </td>
                      <td data-label="Submission">
                        <code class="small">{d.submission_id.slice(0, 8)}</code>
                      </td>
                      <td>
                        <span class={`badge ${tone}`}>{d.status}</span>
                      </td>
                      <td data-label="Attempts">{d.attempts.length}</td>
                      <td data-label="Last answer">
                        <code class="small wrap">{last ? (last.status_code ?? last.error ?? "") : "—"}</code>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </TableWrap>
        )}
      </section>
    </>,
  );
});

formPages.get("/forms/:form_id/export", (c) => exportSubmissions(c.env, c.get("consoleTeam").id, c.req.param("form_id")));

formPages.get("/forms/:form_id/submissions/:sid/files/:file_id", (c) =>
  getSubmissionFile(c.env, c.get("consoleTeam").id, c.req.param("form_id"), c.req.param("sid"), c.req.param("file_id")),
);

for (const [action, status] of [
  ["spam", "spam"],
  ["not-spam", "inbox"],
] as const) {
  formPages.post(`/forms/:form_id/submissions/:sid/${action}`, async (c) => {
    requireRole(c, "developer");
    const formId = c.req.param("form_id");
    await moveSubmission(c.env, c.get("consoleTeam").id, formId, c.req.param("sid"), status);
    return redirectTo(c, `forms/${formId}`, "moved");
  });
}

formPages.post("/forms/:form_id/submissions/:sid/delete", async (c) => {
  requireRole(c, "developer");
  const formId = c.req.param("form_id");
  await deleteSubmission(c.env, c.get("consoleTeam").id, formId, c.req.param("sid"));
  return redirectTo(c, `forms/${formId}`, "deleted");
});

formPages.post("/forms/:form_id/submissions/:sid/resend", async (c) => {
  requireRole(c, "developer");
  const formId = c.req.param("form_id");
  await resendSubmission(c.env, c.get("consoleTeam").id, formId, c.req.param("sid"));
  return redirectTo(c, `forms/${formId}`, "resent");
});
