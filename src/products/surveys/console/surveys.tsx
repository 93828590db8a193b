/** @jsxImportSource hono/jsx */
// The surveys pages: the team's surveys (status, counts; the first survey's create button or curl),
// and one survey's builder (survey-builder.tsx: questions of every type, order, branching) and results: status and counts, a chart per question (choices and ratings as bars,
// NPS with its promoter/passive/detractor split), the responses table with paging, the CSV export,
// the hosted page link and the embed snippet. The same services as /api/v1/surveys.
import { Hono, type Context } from "hono";
import { ApiError, zodDetails } from "../../../platform/errors";
import { csvAttachment } from "../../../platform/csv";
import { exportResponsesCsv } from "../survey-export.service";
import { responsesPage, summaryOf } from "../survey-results.service";
import { foundSurvey, questionRowsOf, sectionRowsOf, selectSurvey, type QuestionRow, type SectionRow } from "../surveys.queries";
import { CreateSurveyBody } from "../surveys.schemas";
import { createSurvey, listSurveys, setStatus, surveyView } from "../surveys.service";
import { formText } from "../../../console/forms";
import { Time } from "../../../console/layout";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, teamPageReads, type ConsoleEnv } from "../../../console/session";
import { CopyBlock, pageNumber, Pager, StatusBadge, TableWrap, ColumnHeads } from "../../../console/pages/parts";
import { settings } from "../../../platform/config";
import { questionView } from "../survey-questions.service";
import { surveyBuilderPages } from "./survey-builder";
import { BUILDER_NOTICES, QuestionBuilder, type BuilderQuestion } from "./survey-builder-view";
import { answerText, QuestionChart, recentAnswers, type QuestionSummary } from "./survey-results-view";
import { surveySettingsPages } from "./survey-settings";

export const surveysPages = new Hono<ConsoleEnv>();

const canWrite = (c: Context<ConsoleEnv>) => roleAtLeast(c.get("consoleTeam").role, "developer");

/** A slug from a name: lower-case words joined by hyphens, with a short random tail (slugs are global). */
function slugFrom(name: string): string {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  return `${base || "survey"}-${crypto.randomUUID().slice(0, 6)}`;
}

const STATUS_TONE = { draft: "gray", active: "ok", closed: "warn" } as const;

surveysPages.get("/surveys", async (c) => {
  const teamId = c.get("consoleTeam").id;
  const q = { page: pageNumber(c), per_page: 20 };
  const list = await listSurveys(c.env, teamId, q);
  const api = `${settings(c.env).appOrigin}/api/v1`;
  const curl = `curl -X POST ${api}/surveys \\\n  -H "Authorization: Bearer $EDP_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"name": "Customer NPS", "slug": "customer-nps"}'`;
  return page(
    c,
    { title: "Surveys", active: "surveys", notices: { created: "Survey created.", deleted: "The survey was deleted with its questions and responses." } },
    list.data.length === 0 && list.pagination.page === 1 ? (
      <section class="section empty-state">
        <h2>Create your first survey</h2>
        <p>Ask your users what they think: build a survey, share its page or embed it, and read the results here.</p>
        {canWrite(c) ? <CreateSurveyForm action={teamPath(c, "surveys")} /> : null}
        <p class="muted">
          Or create one over the API with a key that has <code>surveys:write</code>:
        </p>
        <CopyBlock id="create-survey-curl" text={curl} />
      </section>
    ) : (
      <section class="section">
        <TableWrap label="Surveys of the team">
          <table>
            <caption class="skip">Surveys of the team</caption>
            <ColumnHeads names={["Survey", "Status", "Completed responses", "Created"]} />
            <tbody>
              {list.data.map((s) => (
                <tr data-testid="survey-row">
                  <td>
                    <a href={teamPath(c, `surveys/${s.id}`)}>{s.name}</a>
                    <br />
                    <span class="muted small">/s/{s.slug}</span>
                  </td>
                  <td>
                    <StatusBadge status={s.status} tone={STATUS_TONE[s.status]} />
                  </td>
                  <td>{s.response_count}</td>
                  <td>
                    <Time iso={s.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
        <Pager base={teamPath(c, "surveys")} page={list.pagination.page} pages={list.pagination.total_pages} />
        {canWrite(c) ? <CreateSurveyForm action={teamPath(c, "surveys")} /> : null}
      </section>
    ),
  );
});

function CreateSurveyForm(props: { action: string }) {
  return (
    <form method="post" action={props.action} class="inline-form" data-testid="create-survey">
      <div class="field">
        <label for="survey-name">Survey name</label>
        <input id="survey-name" type="text" name="name" required maxlength={200} placeholder="Customer NPS" />
      </div>
      <button type="submit">Create survey</button>
    </form>
  );
}

surveysPages.post("/surveys", async (c) => {
  requireRole(c, "developer");
  const name = (await formText(c, "name")).trim();
  const parsed = CreateSurveyBody.safeParse({ name, slug: slugFrom(name) });
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  const row = await createSurvey(c.env, c.get("consoleTeam").id, parsed.data);
  return redirectTo(c, `surveys/${row.id}`, "created");
});

for (const action of ["activate", "close"] as const) {
  surveysPages.post(`/surveys/:survey_id/${action}`, async (c) => {
    requireRole(c, "developer");
    const row = await setStatus(c.env, c.get("consoleTeam").id, c.req.param("survey_id"), action === "activate" ? "active" : "closed");
    return redirectTo(c, `surveys/${row.id}`, action === "activate" ? "activated" : "closed");
  });
}

surveysPages.route("/", surveyBuilderPages);
surveysPages.route("/", surveySettingsPages);

surveysPages.get("/surveys/:survey_id/responses.csv", async (c) => {
  const csv = await exportResponsesCsv(c.env, c.get("consoleTeam").id, c.req.param("survey_id"));
  return csvAttachment(csv.filename, csv.body);
});

/** A survey page's D1 reads, made with the session's (scoped by the page's team: see teamPageReads). */
const surveyReads = teamPageReads("/surveys/:survey_id", (db, params) => {
  const owned = { id: params.survey_id!, teamId: params.team_id! };
  return [selectSurvey(db, owned.teamId, owned.id), questionRowsOf(db, owned), sectionRowsOf(db, owned)] as const;
});

surveysPages.get("/surveys/:survey_id", async (c) => {
  const query = { page: pageNumber(c), per_page: 20 };
  // The survey, its questions and its sections came with the session's D1 round trip
  // (surveyReads); once the survey is found (another team's answers 404), its summary and a page of
  // responses together: the reads of the API's summary and response list, made once.
  const [surveyRows, questionRows, sectionRows] = await surveyReads(c);
  const row = foundSurvey(surveyRows);
  const questionList = questionRows as QuestionRow[];
  const sections = sectionRows as SectionRow[];
  const [summary, responses] = await Promise.all([summaryOf(c.env, row, questionList), responsesPage(c.env, row, query)]);
  const survey = { ...surveyView(row), questions: questionList };
  const origin = settings(c.env).appOrigin;
  const hosted = `${origin}/s/${survey.slug}`;
  const embed = `<script src="${origin}/embed.js" data-survey="${survey.slug}" async></script>`;
  const base = teamPath(c, `surveys/${survey.id}`);
  const shown = survey.questions.slice(0, 2);
  const { completed, in_progress, total } = summary.responses;
  const questions = summary.questions as QuestionSummary[];
  return page(
    c,
    {
      title: survey.name,
      active: "surveys",
      notices: {
        created: "Survey created. Add its questions below, then activate it.",
        ...BUILDER_NOTICES,
        activated: "The survey is active and accepts responses.",
        duplicated: "This is a draft copy of the survey, with its sections, questions and settings.",
        closed: "The survey is closed: new responses cannot start.",
      },
    },
    <>
      <div class="row-actions">
        <StatusBadge status={survey.status} tone={STATUS_TONE[survey.status]} />
        <span class="muted small">
          {survey.mode === "ai" ? "AI mode · " : ""}
          {survey.questions.length} questions · created <Time iso={survey.created_at} />
        </span>
        {canWrite(c) && survey.status !== "active" ? (
          <form method="post" action={`${base}/activate`} data-testid="activate-survey">
            <button type="submit" class="small">
              {survey.status === "closed" ? "Reopen" : "Activate"}
            </button>
          </form>
        ) : null}
        {canWrite(c) && survey.status === "active" ? (
          <form method="post" action={`${base}/close`} data-testid="close-survey">
            <button type="submit" class="secondary small">
              Close survey
            </button>
          </form>
        ) : null}
        {canWrite(c) ? (
          <a class="button secondary small" href={`${base}/settings`} data-testid="survey-settings-link">
            Settings
          </a>
        ) : null}
      </div>
      <div class="stats">
        <div class="stat">
          <span class="label">Completed responses</span>
          <span class="value" data-testid="response-count" data-count={String(completed)}>
            {completed}
          </span>
        </div>
        <div class="stat">
          <span class="label">In progress</span>
          <span class="value">{in_progress}</span>
        </div>
        <div class="stat">
          <span class="label">Completion rate</span>
          <span class="value">{total ? `${Math.round((completed / total) * 100)}%` : "–"}</span>
        </div>
      </div>

      <section class="section" aria-labelledby="share-title">
        <h2 id="share-title">Share</h2>
        {survey.status === "draft" ? <p class="warning">This survey is a draft: its page answers “not found” until it is activated.</p> : null}
        <p>
          Hosted page:{" "}
          <a href={hosted} data-testid="hosted-link">
            {hosted}
          </a>
        </p>
        <CopyBlock id="hosted-url" text={hosted} label="Copy link" />
        <p>Embed it on your site:</p>
        <CopyBlock id="embed-snippet" text={embed} label="Copy snippet" />
      </section>

      <QuestionBuilder base={base} questions={survey.questions.map(questionView) as BuilderQuestion[]} sections={sections} writer={canWrite(c)} />

      <section class="section" aria-labelledby="summary-title">
        <h2 id="summary-title">Summary</h2>
        {questions.length === 0 ? (
          <p class="empty">No questions yet: the summary appears once the survey has questions and answers.</p>
        ) : (
          <div class="questions">
            {questions.map((q, i) => (
              <article class="question-card" data-testid="question-summary" data-question-type={q.type}>
                <h3>
                  {i + 1}. {q.title}
                </h3>
                <p class="meta">
                  {q.type.replace("_", " ")} · {q.answered} {q.answered === 1 ? "answer" : "answers"}
                </p>
                <QuestionChart q={q} recent={recentAnswers(responses.data, q.question_id)} />
              </article>
            ))}
          </div>
        )}
      </section>

      <section class="section" aria-labelledby="responses-title">
        <h2 id="responses-title">Responses</h2>
        <div class="row-actions">
          <a class="button secondary small" href={`${base}/responses.csv`} data-testid="export-csv" download>
            Export completed responses (CSV)
          </a>
          <span class="muted small">One row per completed response, one column per question.</span>
        </div>
        {responses.data.length === 0 ? (
          <p class="empty">{survey.status === "active" ? `No responses yet. Share ${hosted} to collect some.` : "No responses yet."}</p>
        ) : (
          <>
            <TableWrap label="Responses, newest first">
              <table class="records">
                <caption class="skip">Responses, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Started</th>
                    <th scope="col">Status</th>
                    {shown.map((q) => (
                      <th scope="col" class="cell-clip">
                        {q.title}
                      </th>
                    ))}
                    <th scope="col">Answers</th>
                  </tr>
                </thead>
                <tbody>
                  {responses.data.map((r) => (
                    <tr data-testid="response-row" data-status={r.status}>
                      <td>
                        <Time iso={r.started_at} />
                      </td>
                      <td>
                        <StatusBadge status={r.status === "completed" ? "completed" : "in progress"} tone={r.status === "completed" ? "ok" : "gray"} />
                      </td>
                      {shown.map((q) => (
                        <td class="cell-clip">{answerText(r.answers[q.id]?.value)}</td>
                      ))}
                      <td>{Object.keys(r.answers).length}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
            <Pager base={base} page={responses.pagination.page} pages={responses.pagination.total_pages} />
          </>
        )}
      </section>
    </>,
  );
});
