/** @jsxImportSource hono/jsx */
// The Forms pages of the console: the team's forms at `forms` with their inbox and spam counts and
// a create form with every setting (post/redirect/get; a webhook's secret shown once on the new
// form's page), one form at `forms/:form_id` (form-page.tsx) and its settings (form-settings.tsx). Every read
// and write goes through the services of /api/v1/forms, under the same tenancy, caps and quota.
import { Hono, type Context } from "hono";
import { ApiError, zodDetails, type FieldErrors } from "../../../platform/errors";
import { redirectWithFlash } from "../../../console/flash";
import { Time } from "../../../console/layout";
import type { NavEntry } from "../../../console/nav";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { TableWrap, ColumnHeads } from "../../../console/pages/parts";
import { CreateFormBody } from "../forms.schemas";
import { createForm, listForms } from "../forms.service";
import { formPages } from "./form-page";
import { EMPTY_DRAFT, readSettings, SettingsErrors, SettingsInputs, settingsPages, type SettingsDraft, type WebhookSecretFlash } from "./form-settings";

export const formsPages = new Hono<ConsoleEnv>();
/** The console's nav entry of the product. */
export const FORMS_NAV: NavEntry = { path: "forms", label: "Forms" };

const canWrite = (c: Context<ConsoleEnv>) => roleAtLeast(c.get("consoleTeam").role, "developer");

function CreateForm(props: { action: string; errors?: FieldErrors; draft?: SettingsDraft }) {
  return (
    <form method="post" action={props.action} class="section" data-testid="create-form">
      <h2>Create a form</h2>
      <SettingsErrors errors={props.errors} />
      <SettingsInputs id="create" draft={props.draft ?? EMPTY_DRAFT} />
      <button type="submit">Create form</button>
    </form>
  );
}

const NOTICES = { deleted: "Form deleted, with its submissions and files." };

async function listPage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors; draft?: SettingsDraft } = {}, status: 200 | 422 = 200) {
  const team = c.get("consoleTeam");
  const forms = await listForms(c.env, team.id);
  return page(
    c,
    { title: "Forms", active: "forms", status, notices: NOTICES },
    <>
      <section class="section">
        <h2>Forms</h2>
        {forms.length === 0 ? (
          <div class="empty-state">
            <p>No forms yet. A form gives any HTML page an address to post to: submissions land here, spam apart, and can be mailed or sent to a webhook.</p>
            {canWrite(c) ? <p>Create the first one below.</p> : <p class="muted">A developer, admin or owner of the team creates forms.</p>}
          </div>
        ) : (
          <TableWrap label="Forms of the team">
            <table class="stack">
              <caption class="skip">Forms of the team</caption>
              <ColumnHeads names={["Name", "Inbox", "Spam", "State", "Created"]} />
              <tbody>
                {forms.map((f) => (
                  <tr data-testid="form-row">
                    <td>
                      <a href={teamPath(c, `forms/${f.id}`)}>{f.name}</a>
                    </td>
                    <td data-testid="inbox-count" data-label="Inbox">
                      {f.submission_count}
                    </td>
                    <td data-label="Spam">{f.spam_count}</td>
                    <td>{f.enabled ? <span class="badge ok">accepting</span> : <span class="badge gray">disabled</span>}</td>
                    <td data-label="Created">
                      <Time iso={f.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </section>
      {canWrite(c) ? <CreateForm action={teamPath(c, "forms")} errors={extra.errors} draft={extra.draft} /> : null}
    </>,
  );
}

formsPages.get("/forms", (c) => listPage(c));

formsPages.post("/forms", async (c) => {
  requireRole(c, "developer");
  const { draft, body, errors } = await readSettings(c);
  const parsed = CreateFormBody.safeParse(body);
  if (!parsed.success || Object.keys(errors).length > 0) {
    return listPage(c, { errors: { ...errors, ...(parsed.success ? {} : zodDetails(parsed.error)) }, draft }, 422);
  }
  try {
    const form = await createForm(c.env, c.get("consoleTeam").id, parsed.data);
    if (form.webhook_secret && form.webhook_url) {
      return redirectWithFlash(c, `forms/${form.id}`, "created-webhook", { url: form.webhook_url, secret: form.webhook_secret } satisfies WebhookSecretFlash);
    }
    return redirectTo(c, `forms/${form.id}`, "created");
  } catch (error) {
    if (error instanceof ApiError && error.code === "validation") return listPage(c, { errors: error.details, draft }, 422);
    throw error;
  }
});

formsPages.route("/", settingsPages);
formsPages.route("/", formPages);
