/** @jsxImportSource hono/jsx */
// A survey's settings at `surveys/:survey_id/settings`: its name, address (slug) and the hosted
// page's display settings; its sections (create, rename, order by position, delete: questions
// stay, in no section); its result webhooks (create: the signing secret shown once through the
// flash; delete); duplication; and deletion after typing its name. The services of updateSurvey,
// the `…/sections` and `…/webhooks` operations, duplicateSurvey and deleteSurvey; every write
// redirects (post/redirect/get), and a refused form answers again at 422 and changes nothing.
import { Hono, type Context } from "hono";
import { zodDetails, type FieldErrors } from "../../../platform/errors";
import { getDb } from "../../../db/client";
import { createSection, deleteSection, listSections, updateSection } from "../survey-sections.service";
import { createWebhook, deleteWebhook, listWebhooks } from "../survey-webhooks.service";
import { CreateWebhookBody } from "../survey-results.schemas";
import { CreateSectionBody, PatchSectionBody, PatchSurveyBody } from "../surveys.schemas";
import { deleteSurvey, duplicateSurvey, surveyView, updateSurvey } from "../surveys.service";
import { loadSurvey } from "../surveys.queries";
import { formText } from "../../../console/forms";
import { Time } from "../../../console/layout";
import { redirectWithFlash, takeFlash } from "../../../console/flash";
import { ConfirmForm, DeleteSection, Errors, refused, SecretValue, TableWrap, ColumnHeads } from "../../../console/pages/parts";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, type ConsoleEnv } from "../../../console/session";

export const surveySettingsPages = new Hono<ConsoleEnv>();

const SURVEY = "/surveys/:survey_id";
const settingsPath = (c: Context<ConsoleEnv>) => `surveys/${c.req.param("survey_id")}/settings`;

const NOTICES = {
  saved: "Settings saved.",
  "section-added": "Section added.",
  "section-saved": "Section saved.",
  "section-deleted": "Section deleted; its questions are now in no section.",
  "webhook-added": "Webhook added.",
  "webhook-deleted": "Webhook deleted.",
};

/** The flash of a new webhook: its signing secret, shown once. */
type WebhookFlash = { url: string; secret: string };

type SettingsForm = { name: string; slug: string; theme: string; progress: boolean; thanks: string; redirect: string; delay: string };
type Problems = { settings?: FieldErrors; section?: FieldErrors; webhook?: FieldErrors };

async function settingsPage(c: Context<ConsoleEnv>, extra: { errors?: Problems; form?: SettingsForm } = {}) {
  const teamId = c.get("consoleTeam").id;
  const surveyId = c.req.param("survey_id") ?? "";
  const survey = surveyView(await loadSurvey(getDb(c.env.DB), teamId, surveyId));
  const [sections, webhooks, added] = await Promise.all([
    listSections(c.env, teamId, survey.id),
    listWebhooks(c.env, teamId, survey.id),
    takeFlash<WebhookFlash>(c, "webhook-added"),
  ]);
  const s = survey.settings as Record<string, unknown>;
  const theme = typeof s.theme === "string" ? s.theme : "";
  const form = extra.form ?? {
    name: survey.name,
    slug: survey.slug,
    theme,
    progress: s.show_progress !== false,
    thanks: typeof s.thank_you_message === "string" ? s.thank_you_message : "",
    redirect: typeof s.redirect_url === "string" ? s.redirect_url : "",
    delay: typeof s.redirect_delay_seconds === "number" ? String(s.redirect_delay_seconds) : "",
  };
  const base = teamPath(c, `surveys/${survey.id}`);
  return page(
    c,
    { title: `${survey.name}: settings`, active: "surveys", status: extra.errors ? 422 : 200, notices: NOTICES },
    <>
      <div class="row-actions">
        <a href={base}>← {survey.name}</a>
      </div>
      <form method="post" action={`${base}/settings`} class="section" data-testid="survey-settings">
        <h2>Settings</h2>
        <Errors errors={extra.errors?.settings} />
        <div class="inline-form">
          <div class="field">
            <label for="survey-name">Name</label>
            <input id="survey-name" type="text" name="name" required maxlength={200} value={form.name} />
          </div>
          <div class="field">
            <label for="survey-slug">Address (/s/…)</label>
            <input id="survey-slug" type="text" name="slug" required maxlength={100} value={form.slug} />
          </div>
        </div>
        <div class="inline-form">
          <div class="field narrow">
            <label for="survey-theme">Theme</label>
            <select id="survey-theme" name="theme" disabled={typeof s.theme === "object" && s.theme !== null}>
              <option value="">Light (default)</option>
              <option value="dark" selected={form.theme === "dark"}>
                Dark
              </option>
            </select>
          </div>
          <div class="field">
            <label for="survey-thanks">Thank-you message</label>
            <input id="survey-thanks" type="text" name="thank_you_message" maxlength={1000} value={form.thanks} />
          </div>
        </div>
        <div class="inline-form">
          <div class="field">
            <label for="survey-redirect">After completion, open (https)</label>
            <input id="survey-redirect" type="url" name="redirect_url" maxlength={2000} value={form.redirect} placeholder="https://example.com/thanks" />
          </div>
          <div class="field narrow">
            <label for="survey-delay">After (seconds)</label>
            <input id="survey-delay" type="number" name="redirect_delay_seconds" min={0} max={30} value={form.delay} />
          </div>
        </div>
        <label class="check">
          <input type="checkbox" name="show_progress" value="on" checked={form.progress} /> Show progress
        </label>
        {typeof s.theme === "object" && s.theme !== null ? <p class="hint muted small">A custom theme set over the API is kept as it is.</p> : null}
        <p>
          <button type="submit">Save settings</button>
        </p>
      </form>

      <section class="section" aria-labelledby="sections-title">
        <h2 id="sections-title">Sections</h2>
        <p class="muted small">Sections group questions on the hosted page, in the order of their position; a question picks its section in the builder.</p>
        <Errors errors={extra.errors?.section} />
        {sections.map((sec) => (
          <form method="post" action={`${base}/sections/${sec.id}`} class="inline-form" data-testid="section-row">
            <div class="field">
              <label for={`section-${sec.id}-title`}>Title</label>
              <input id={`section-${sec.id}-title`} type="text" name="title" maxlength={500} value={sec.title ?? ""} />
            </div>
            <div class="field narrow">
              <label for={`section-${sec.id}-position`}>Position</label>
              <input id={`section-${sec.id}-position`} type="number" name="position" required min={1} max={100_000} value={String(sec.position)} />
            </div>
            <button type="submit" class="secondary small">
              Save
            </button>
            <button type="submit" class="danger small" formaction={`${base}/sections/${sec.id}/delete`}>
              Delete
            </button>
          </form>
        ))}
        <form method="post" action={`${base}/sections`} class="inline-form" data-testid="add-section">
          <div class="field">
            <label for="section-new-title">New section</label>
            <input id="section-new-title" type="text" name="title" maxlength={500} placeholder="About you" />
          </div>
          <div class="field narrow">
            <label for="section-new-position">Position</label>
            <input
              id="section-new-position"
              type="number"
              name="position"
              required
              min={1}
              max={100_000}
              value={String(Math.max(0, ...sections.map((x) => x.position)) + 1)}
            />
          </div>
          <button type="submit" class="small">
            Add section
          </button>
        </form>
      </section>

      <section class="section" aria-labelledby="webhooks-title">
        <h2 id="webhooks-title">Result webhooks</h2>
        <p class="muted small">Each completed response is posted to these addresses, signed (Standard Webhooks headers).</p>
        {added ? (
          <div data-testid="new-webhook">
            <p>
              Responses are posted to <code class="wrap">{added.url}</code>, signed with this secret.
            </p>
            <p class="warning">Copy the signing secret now. It is shown only this once.</p>
            <SecretValue id="new-webhook-secret" value={added.secret} />
          </div>
        ) : c.req.query("notice") === "webhook-added" ? (
          <p class="muted">The webhook's signing secret was shown once and is not shown again.</p>
        ) : null}
        {webhooks.length === 0 ? (
          <p class="empty">No webhook.</p>
        ) : (
          <TableWrap label="Result webhooks">
            <table>
              <caption class="skip">Result webhooks</caption>
              <ColumnHeads names={["URL", "Events", "Added", "Delete"]} />
              <tbody>
                {webhooks.map((w) => (
                  <tr data-testid="survey-webhook-row">
                    <td>
                      <code class="wrap">{w.url}</code>
                    </td>
                    <td>{w.events.join(", ")}</td>
                    <td>
                      <Time iso={w.created_at} />
                    </td>
                    <td>
                      <form method="post" action={`${base}/webhooks/${w.id}/delete`} class="inline">
                        <button type="submit" class="danger small" aria-label={`Delete webhook ${w.url}`}>
                          Delete
                        </button>
                      </form>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
        <form method="post" action={`${base}/webhooks`} class="inline-form" data-testid="add-survey-webhook">
          <Errors errors={extra.errors?.webhook} />
          <div class="field grow">
            <label for="webhook-url">URL</label>
            <input id="webhook-url" type="url" name="url" required maxlength={2048} placeholder="https://example.com/hooks/survey" />
          </div>
          <button type="submit" class="small">
            Add webhook
          </button>
        </form>
      </section>

      <section class="section" aria-labelledby="copy-title">
        <h2 id="copy-title">Duplicate</h2>
        <p class="muted small">A draft copy with the same sections, questions, branching and settings, and no responses.</p>
        <form method="post" action={`${base}/duplicate`} data-testid="duplicate-survey">
          <button type="submit" class="secondary small">
            Duplicate survey
          </button>
        </form>
      </section>
      <DeleteSection
        what="survey"
        consequence="Its questions, responses and webhooks are deleted; its address stops answering."
        href={`${base}/delete`}
        testid="delete-survey"
      />
    </>,
  );
}

surveySettingsPages.get(`${SURVEY}/settings`, (c) => {
  requireRole(c, "developer");
  return settingsPage(c);
});

surveySettingsPages.post(`${SURVEY}/settings`, async (c) => {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const row = await loadSurvey(getDb(c.env.DB), teamId, c.req.param("survey_id"));
  const form: SettingsForm = {
    name: await formText(c, "name"),
    slug: (await formText(c, "slug")).trim(),
    theme: await formText(c, "theme"),
    progress: (await formText(c, "show_progress")) === "on",
    thanks: (await formText(c, "thank_you_message")).trim(),
    redirect: (await formText(c, "redirect_url")).trim(),
    delay: (await formText(c, "redirect_delay_seconds")).trim(),
  };
  // The survey's other settings (button labels, a custom theme, keys of its own) are kept.
  const settings: Record<string, unknown> = { ...(row.settings as Record<string, unknown>), show_progress: form.progress };
  const set = (key: string, value: unknown) => (value === "" ? delete settings[key] : (settings[key] = value));
  if (typeof settings.theme !== "object" || settings.theme === null) set("theme", form.theme);
  set("thank_you_message", form.thanks);
  set("redirect_url", form.redirect);
  set("redirect_delay_seconds", form.delay === "" ? "" : Number(form.delay));
  const parsed = PatchSurveyBody.safeParse({ name: form.name, slug: form.slug, settings });
  // The display settings' errors name their field (`settings.redirect_url`): the form's fields.
  const fields = (errors: FieldErrors) => Object.fromEntries(Object.entries(errors).map(([k, v]) => [k.replace(/^settings\./, ""), v]));
  if (!parsed.success) return settingsPage(c, { errors: { settings: fields(zodDetails(parsed.error)) }, form });
  // A taken address: the form again.
  const errors = await refused(() => updateSurvey(c.env, teamId, row.id, parsed.data));
  if (errors) return settingsPage(c, { errors: { settings: fields(errors) }, form });
  return redirectTo(c, settingsPath(c), "saved");
});

// ---------------------------------------------------------------------------------------------
// Sections

async function sectionFields(c: Context<ConsoleEnv>) {
  const title = (await formText(c, "title")).trim();
  const position = await formText(c, "position");
  return { title: title || null, position: position === "" ? Number.NaN : Number(position) };
}

surveySettingsPages.post(`${SURVEY}/sections`, async (c) => {
  requireRole(c, "developer");
  const parsed = CreateSectionBody.safeParse(await sectionFields(c));
  if (!parsed.success) return settingsPage(c, { errors: { section: zodDetails(parsed.error) } });
  const errors = await refused(() => createSection(c.env, c.get("consoleTeam").id, c.req.param("survey_id"), parsed.data));
  if (errors) return settingsPage(c, { errors: { section: errors } });
  return redirectTo(c, settingsPath(c), "section-added");
});

surveySettingsPages.post(`${SURVEY}/sections/:section_id`, async (c) => {
  requireRole(c, "developer");
  const parsed = PatchSectionBody.safeParse(await sectionFields(c));
  if (!parsed.success) return settingsPage(c, { errors: { section: zodDetails(parsed.error) } });
  await updateSection(c.env, c.get("consoleTeam").id, c.req.param("survey_id"), c.req.param("section_id"), parsed.data);
  return redirectTo(c, settingsPath(c), "section-saved");
});

surveySettingsPages.post(`${SURVEY}/sections/:section_id/delete`, async (c) => {
  requireRole(c, "developer");
  await deleteSection(c.env, c.get("consoleTeam").id, c.req.param("survey_id"), c.req.param("section_id"));
  return redirectTo(c, settingsPath(c), "section-deleted");
});

// ---------------------------------------------------------------------------------------------
// Result webhooks

surveySettingsPages.post(`${SURVEY}/webhooks`, async (c) => {
  requireRole(c, "developer");
  const parsed = CreateWebhookBody.safeParse({ url: (await formText(c, "url")).trim() });
  if (!parsed.success) return settingsPage(c, { errors: { webhook: zodDetails(parsed.error) } });
  let created: Awaited<ReturnType<typeof createWebhook>> | undefined;
  // An address the SSRF guard refuses, or the cap.
  const errors = await refused(async () => {
    created = await createWebhook(c.env, c.get("consoleTeam").id, c.req.param("survey_id"), parsed.data);
  });
  if (errors || !created) return settingsPage(c, { errors: { webhook: errors ?? {} } });
  return redirectWithFlash(c, settingsPath(c), "webhook-added", { url: created.url, secret: created.secret } satisfies WebhookFlash);
});

surveySettingsPages.post(`${SURVEY}/webhooks/:webhook_id/delete`, async (c) => {
  requireRole(c, "developer");
  await deleteWebhook(c.env, c.get("consoleTeam").id, c.req.param("survey_id"), c.req.param("webhook_id"));
  return redirectTo(c, settingsPath(c), "webhook-deleted");
});

// ---------------------------------------------------------------------------------------------
// Duplicate, delete

surveySettingsPages.post(`${SURVEY}/duplicate`, async (c) => {
  requireRole(c, "developer");
  const copy = await duplicateSurvey(c.env, c.get("consoleTeam").id, c.req.param("survey_id"));
  return redirectTo(c, `surveys/${copy.id}`, "duplicated");
});

async function deletePage(c: Context<ConsoleEnv>, error?: string) {
  const survey = await loadSurvey(getDb(c.env.DB), c.get("consoleTeam").id, c.req.param("survey_id") ?? "");
  return page(
    c,
    { title: `Delete ${survey.name}?`, active: "surveys", status: error ? 422 : 200 },
    <ConfirmForm
      action={teamPath(c, `surveys/${survey.id}/delete`)}
      question={
        <>
          Delete the survey <strong>{survey.name}</strong> with its {survey.responseCount} {survey.responseCount === 1 ? "response" : "responses"}, questions
          and webhooks? Its address stops answering. This cannot be undone.
        </>
      }
      typeName={survey.name}
      error={error}
      button="Delete survey"
      cancel={teamPath(c, settingsPath(c))}
      testid="confirm-delete-survey"
    />,
  );
}

surveySettingsPages.get(`${SURVEY}/delete`, (c) => {
  requireRole(c, "developer");
  return deletePage(c);
});

surveySettingsPages.post(`${SURVEY}/delete`, async (c) => {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const survey = await loadSurvey(getDb(c.env.DB), teamId, c.req.param("survey_id"));
  if ((await formText(c, "confirm_name")).trim() !== survey.name) return deletePage(c, "confirm name: type the name of the survey exactly to delete it");
  await deleteSurvey(c.env, teamId, survey.id);
  return redirectTo(c, "surveys", "deleted");
});
