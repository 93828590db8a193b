/** @jsxImportSource hono/jsx */
// An audit project's findings on its page (audit.tsx): the list with a status filter and, for
// writers, the forms that record one (also from the empty audit page), change its title, priority
// and status, and verify it; the project of a path (shared with the scan pages).
import { Hono, type Context } from "hono";
import { FINDING_STATUSES, type FindingStatus } from "../../../db/schema/audit";
import { ApiError, zodDetails } from "../../../platform/errors";
import { addVerification, createFinding, updateFinding, type FindingView } from "../audit-findings.service";
import type { Scope } from "../audit-summary.service";
import { CreateFindingBody, CreateVerificationBody, PatchFindingBody, PROJECT_ID } from "../audit.schemas";
import { formText } from "../../../console/forms";
import { Time } from "../../../console/layout";
import { redirectTo } from "../../../console/render";
import { requireRole, type ConsoleEnv } from "../../../console/session";
import { StatusBadge, TableWrap } from "../../../console/pages/parts";

export const auditFindingPages = new Hono<ConsoleEnv>();

/** The project of the path: a project id that cannot exist is a 404, like another team's. */
export function scopeOf(c: Context<ConsoleEnv>): Scope {
  const projectId = c.req.param("project_id") ?? "";
  if (!PROJECT_ID.test(projectId)) throw ApiError.notFound("Project not found");
  return { teamId: c.get("consoleTeam").id, projectId };
}

// ---------------------------------------------------------------------------------------------
// Findings: listed with a status filter, recorded, edited (title, priority, status) and verified,
// through the services of /api/v1/orgs/{org_id}/projects/{project_id}/audit/findings.

export const FINDINGS_PAGE = 25;
const FINDING_TONE: Record<FindingStatus, string> = {
  new: "warn",
  triaged: "",
  in_progress: "",
  ready_verify: "warn",
  resolved: "ok",
  dismissed: "gray",
};

export function NewFindingForm(props: { action: string; withProject?: boolean }) {
  return (
    <form method="post" action={props.action} class="inline-form" data-testid="create-finding">
      {props.withProject ? (
        <div class="field">
          <label for="finding-project">Project</label>
          <input
            id="finding-project"
            type="text"
            name="project_id"
            required
            maxlength={128}
            pattern="[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}"
            placeholder="my-app"
          />
        </div>
      ) : null}
      <div class="field">
        <label for="finding-title">Finding</label>
        <input id="finding-title" type="text" name="title" required maxlength={500} placeholder="Missing rate limit on login" />
      </div>
      <div class="field narrow">
        <label for="finding-priority">Priority score</label>
        <input id="finding-priority" type="number" name="priority_score" min={0} max={1_000_000} step="any" value="0" />
      </div>
      <div class="field">
        <button type="submit">Record finding</button>
      </div>
    </form>
  );
}

export function Findings(props: {
  base: string;
  findings: { items: FindingView[]; total: number };
  query: { status?: FindingStatus; page: number; per_page: number };
  writer: boolean;
}) {
  const { base, findings, query, writer } = props;
  const pages = Math.max(1, Math.ceil(findings.total / query.per_page));
  const link = (page: number) => `${base}?${new URLSearchParams({ ...(query.status ? { status: query.status } : {}), findings_page: String(page) })}`;
  return (
    <section class="section" aria-labelledby="findings-title">
      <h2 id="findings-title">Findings</h2>
      <form method="get" action={base} class="inline-form" data-testid="filter-findings">
        <div class="field narrow">
          <label for="findings-status">Status</label>
          <select id="findings-status" name="status">
            <option value="">any</option>
            {FINDING_STATUSES.map((s) => (
              <option value={s} selected={query.status === s}>
                {s.replace("_", " ")}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <button type="submit" class="secondary small">
            Filter
          </button>
        </div>
      </form>
      {findings.items.length === 0 ? (
        <p class="empty">{query.status ? "No finding has this status." : "No findings yet."}</p>
      ) : (
        <TableWrap label="Findings, newest first">
          <table>
            <caption class="skip">Findings, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Finding</th>
                <th scope="col">Priority</th>
                <th scope="col">Status</th>
                <th scope="col">Recorded</th>
                {writer ? (
                  <th scope="col">
                    <span class="skip">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {findings.items.map((f) => (
                <tr data-testid="finding-row" data-status={f.status} data-finding-id={f.id}>
                  <td class="cell-wrap">
                    {f.title}
                    {f.regression ? <span class="badge danger"> regression</span> : null}
                  </td>
                  <td>{f.priority_score}</td>
                  <td>
                    <StatusBadge status={f.status.replace("_", " ")} tone={FINDING_TONE[f.status]} />
                  </td>
                  <td>
                    <Time iso={f.created_at} />
                  </td>
                  {writer ? (
                    <td>
                      <details>
                        <summary>Change</summary>
                        <form method="post" action={`${base}/findings/${f.id}`} data-testid="update-finding">
                          <div class="field">
                            <label for={`f-${f.id}-title`}>Finding</label>
                            <input id={`f-${f.id}-title`} type="text" name="title" required maxlength={500} value={f.title} />
                          </div>
                          <div class="inline-form">
                            <div class="field narrow">
                              <label for={`f-${f.id}-priority`}>Priority</label>
                              <input
                                id={`f-${f.id}-priority`}
                                type="number"
                                name="priority_score"
                                min={0}
                                max={1_000_000}
                                step="any"
                                value={String(f.priority_score)}
                              />
                            </div>
                            <div class="field narrow">
                              <label for={`f-${f.id}-status`}>Status</label>
                              <select id={`f-${f.id}-status`} name="status">
                                {FINDING_STATUSES.map((s) => (
                                  <option value={s} selected={f.status === s}>
                                    {s.replace("_", " ")}
                                  </option>
                                ))}
                              </select>
                            </div>
                          </div>
                          <button type="submit" class="small">
                            Save
                          </button>
                        </form>
                        <form method="post" action={`${base}/findings/${f.id}/verify`} class="inline-form" data-testid="verify-finding">
                          <div class="field narrow">
                            <label for={`f-${f.id}-result`}>Verification</label>
                            <select id={`f-${f.id}-result`} name="result">
                              <option value="passed">passed</option>
                              <option value="failed">failed</option>
                            </select>
                          </div>
                          <div class="field">
                            <label for={`f-${f.id}-note`}>Note</label>
                            <input id={`f-${f.id}-note`} type="text" name="note" maxlength={2000} />
                          </div>
                          <div class="field">
                            <button type="submit" class="secondary small">
                              Record
                            </button>
                          </div>
                        </form>
                      </details>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {pages > 1 ? (
        <nav class="pager" aria-label="Pages of findings">
          {query.page > 1 ? <a href={link(query.page - 1)}>← Newer</a> : null}
          <span class="muted small">
            Page {query.page} of {pages}
          </span>
          {query.page < pages ? <a href={link(query.page + 1)}>Older →</a> : null}
        </nav>
      ) : null}
      {writer ? (
        <>
          <h3>Record a finding</h3>
          <NewFindingForm action={`${base}/findings`} />
        </>
      ) : null}
    </section>
  );
}

/** A finding's fields from a form, as the API's body (an empty priority is the default 0). */
async function findingForm(c: Context<ConsoleEnv>) {
  const priority = (await formText(c, "priority_score")).trim();
  return { title: await formText(c, "title"), ...(priority === "" ? {} : { priority_score: Number(priority) }) };
}

async function recordFinding(c: Context<ConsoleEnv>, scope: Scope): Promise<Response> {
  const parsed = CreateFindingBody.safeParse(await findingForm(c));
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  await createFinding(c.env, scope, parsed.data);
  return redirectTo(c, `audit/projects/${encodeURIComponent(scope.projectId)}`, "finding-created");
}

auditFindingPages.post("/audit/findings", async (c) => {
  requireRole(c, "developer");
  const projectId = (await formText(c, "project_id")).trim();
  if (!PROJECT_ID.test(projectId))
    throw ApiError.validation({ project_id: ["letters, digits, '.', '_', ':' or '-', at most 128, starting with a letter or digit"] });
  return recordFinding(c, { teamId: c.get("consoleTeam").id, projectId });
});

auditFindingPages.post("/audit/projects/:project_id/findings", async (c) => {
  requireRole(c, "developer");
  return recordFinding(c, scopeOf(c));
});

auditFindingPages.post("/audit/projects/:project_id/findings/:finding_id", async (c) => {
  requireRole(c, "developer");
  const scope = scopeOf(c);
  const parsed = PatchFindingBody.safeParse({ ...(await findingForm(c)), status: await formText(c, "status") });
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  await updateFinding(c.env, scope, c.req.param("finding_id"), parsed.data);
  return redirectTo(c, `audit/projects/${encodeURIComponent(scope.projectId)}`, "finding-saved");
});

auditFindingPages.post("/audit/projects/:project_id/findings/:finding_id/verify", async (c) => {
  requireRole(c, "developer");
  const scope = scopeOf(c);
  const note = (await formText(c, "note")).trim();
  const parsed = CreateVerificationBody.safeParse({ result: await formText(c, "result"), ...(note ? { note } : {}) });
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  await addVerification(c.env, scope, c.req.param("finding_id"), parsed.data);
  return redirectTo(c, `audit/projects/${encodeURIComponent(scope.projectId)}`, "finding-verified");
});
