/** @jsxImportSource hono/jsx */
// The Forms pages of the console: the team's forms at `forms` with their inbox and spam counts and
// a create form (post/redirect/get), and one form at `forms/:form_id` (form-page.tsx). Every read
// and write goes through the services of /api/v1/forms, under the same tenancy, caps and quota.
import { Hono, type Context } from "hono";
import { ApiError, zodDetails, type FieldErrors } from "../../../platform/errors";
import { formText } from "../../../console/forms";
import { Time } from "../../../console/layout";
import type { NavEntry } from "../../../console/nav";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { TableWrap } from "../../../console/pages/parts";
import { CreateFormBody } from "../forms.schemas";
import { createForm, listForms } from "../forms.service";
import { formPages } from "./form-page";

export const formsPages = new Hono<ConsoleEnv>();
/** The console's nav entry of the product. */
export const FORMS_NAV: NavEntry = { path: "forms", label: "Forms" };

const canWrite = (c: Context<ConsoleEnv>) => roleAtLeast(c.get("consoleTeam").role, "developer");

function Errors(props: { errors?: FieldErrors }) {
  if (!props.errors) return null;
  return (
    <ul class="errors">
      {Object.entries(props.errors).map(([field, messages]) => (
        <li>
          {field.replace(/_/g, " ")}: {messages.join(", ")}
        </li>
      ))}
    </ul>
  );
}

interface Draft {
  name?: string;
  redirect_url?: string;
  allowed_origins?: string;
}

function CreateForm(props: { action: string; errors?: FieldErrors; draft?: Draft }) {
  const d = props.draft ?? {};
  return (
    <form method="post" action={props.action} class="section" data-testid="create-form">
      <h2>Create a form</h2>
      <Errors errors={props.errors} />
      <div class="field">
        <label for="form-name">Name</label>
        <input id="form-name" type="text" name="name" required maxlength={200} value={d.name ?? ""} placeholder="Contact" />
      </div>
      <div class="field">
        <label for="form-redirect">After a post, send visitors to (optional)</label>
        <input id="form-redirect" type="url" name="redirect_url" maxlength={2048} value={d.redirect_url ?? ""} placeholder="https://example.com/thanks" />
      </div>
      <div class="field">
        <label for="form-origins">Only accept posts from these sites (optional, comma separated)</label>
        <input id="form-origins" type="text" name="allowed_origins" value={d.allowed_origins ?? ""} placeholder="https://example.com" />
      </div>
      <div class="field">
        <label class="check">
          <input type="checkbox" name="files" value="on" /> Accept file uploads (up to 10 MB per submission)
        </label>
      </div>
      <button type="submit">Create form</button>
      <p class="hint muted small">Fields, notification mail and the signed webhook are set over the API (PATCH /api/v1/forms/:id).</p>
    </form>
  );
}

async function listPage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors; draft?: Draft } = {}, status: 200 | 422 = 200) {
  const team = c.get("consoleTeam");
  const forms = await listForms(c.env, team.id);
  return page(
    c,
    { title: "Forms", active: "forms", status },
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
            <table>
              <caption class="skip">Forms of the team</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Inbox</th>
                  <th scope="col">Spam</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {forms.map((f) => (
                  <tr data-testid="form-row">
                    <td>
                      <a href={teamPath(c, `forms/${f.id}`)}>{f.name}</a>
                    </td>
                    <td data-testid="inbox-count">{f.submission_count}</td>
                    <td>{f.spam_count}</td>
                    <td>{f.enabled ? <span class="badge ok">accepting</span> : <span class="badge gray">disabled</span>}</td>
                    <td>
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
  const draft: Draft = {
    name: await formText(c, "name"),
    redirect_url: await formText(c, "redirect_url"),
    allowed_origins: await formText(c, "allowed_origins"),
  };
  const origins = (draft.allowed_origins ?? "").split(/[\s,]+/).filter(Boolean);
  const parsed = CreateFormBody.safeParse({
    name: draft.name,
    allowed_origins: origins,
    redirect_url: draft.redirect_url || null,
    files: { enabled: (await formText(c, "files")) === "on" },
  });
  if (!parsed.success) return listPage(c, { errors: zodDetails(parsed.error), draft }, 422);
  try {
    const form = await createForm(c.env, c.get("consoleTeam").id, parsed.data);
    return redirectTo(c, `forms/${form.id}`, "created");
  } catch (error) {
    if (error instanceof ApiError && error.code === "validation") return listPage(c, { errors: error.details, draft }, 422);
    throw error;
  }
});

formsPages.route("/", formPages);
