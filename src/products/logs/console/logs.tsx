/** @jsxImportSource hono/jsx */
// The Logs pages: the team's projects at `logs` (create one, its ingest token shown once; delete
// one after typing its name), a project's explorer at `logs/:project_id` (logs-project.tsx: search,
// histogram, live tail, token rotation) and its alerts (logs-alerts.tsx). Every read and write goes
// through the services of /api/v1/logs, under the same tenancy.
import { Hono, type Context } from "hono";
import { zodDetails } from "../../../platform/errors";
import { CreateProjectBody, DEFAULT_DAILY_LIMIT_MB } from "../logs.schemas";
import { createProject, deleteProject, getProject, listProjects, projectView } from "../logs.service";
import { Time } from "../../../console/layout";
import { formText } from "../../../console/forms";
import { redirectWithFlash } from "../../../console/flash";
import { ConfirmForm, Errors, ColumnHeads, TableWrap } from "../../../console/pages/parts";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { logAlertPages } from "./logs-alerts";
import { logProjectPages, type TokenFlash } from "./logs-project";

export const logsPages = new Hono<ConsoleEnv>();
logsPages.route("/", logProjectPages);
logsPages.route("/", logAlertPages);

// ---------------------------------------------------------------------------------------------
// Projects

const PROJECTS_NOTICES = { deleted: "The project was deleted with all its entries, streams and alerts." };

async function projectsPage(c: Context<ConsoleEnv>, extra: { errors?: Record<string, string[]>; name?: string } = {}, status: 200 | 422 = 200) {
  const team = c.get("consoleTeam");
  const projects = (await listProjects(c.env, team.id)).map(projectView);
  const canWrite = roleAtLeast(team.role, "developer");
  const base = teamPath(c, "logs");
  return page(
    c,
    { title: "Logs", active: "logs", status, notices: PROJECTS_NOTICES },
    <>
      <section class="section">
        <h2>Projects</h2>
        {projects.length === 0 ? (
          <div class="empty-state">
            <p>No log projects yet. A project holds the entries of one app or service and has its own ingest token.</p>
            {canWrite ? (
              <p>Create the first one below, then send it a line with curl.</p>
            ) : (
              <p class="muted">A developer, admin or owner of the team creates projects.</p>
            )}
          </div>
        ) : (
          <TableWrap label="Log projects of the team">
            <table>
              <caption class="skip">Log projects of the team</caption>
              <ColumnHeads names={["Name", "Ingest token", "Streams", "Kept", "Daily limit", "Created"]} />
              <tbody>
                {projects.map((p) => (
                  <tr data-testid="project-row">
                    <td>
                      <a href={`${base}/${p.id}`}>{p.name}</a>
                    </td>
                    <td>
                      <code>{p.ingest_token_prefix}…</code>
                    </td>
                    <td>{p.stream_count}</td>
                    <td>{p.retention_days} days</td>
                    <td>{p.daily_limit_mb} MB</td>
                    <td>
                      <Time iso={p.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </section>
      {canWrite ? (
        <form method="post" action={base} class="section" data-testid="create-project">
          <h2>Create a project</h2>
          <Errors errors={extra.errors} />
          <div class="inline-form">
            <div class="field">
              <label for="project-name">Name</label>
              <input id="project-name" type="text" name="name" required maxlength={200} value={extra.name ?? ""} placeholder="api-production" />
            </div>
            <div class="field narrow">
              <label for="project-limit">Daily limit (MB)</label>
              <input id="project-limit" type="number" name="daily_limit_mb" min={1} max={1_048_576} value={String(DEFAULT_DAILY_LIMIT_MB)} />
            </div>
            <div class="field">
              <button type="submit">Create project</button>
            </div>
          </div>
        </form>
      ) : null}
    </>,
  );
}

logsPages.get("/logs", (c) => projectsPage(c));

logsPages.post("/logs", async (c) => {
  requireRole(c, "developer");
  const name = await formText(c, "name");
  const limit = await formText(c, "daily_limit_mb");
  const parsed = CreateProjectBody.safeParse({ name, ...(limit ? { daily_limit_mb: Number(limit) } : {}) });
  if (!parsed.success) return projectsPage(c, { errors: zodDetails(parsed.error), name }, 422);
  const { row, token } = await createProject(c.env, c.get("consoleTeam").id, parsed.data);
  return redirectWithFlash(c, `logs/${row.id}`, "created", { token } satisfies TokenFlash);
});

// ---------------------------------------------------------------------------------------------
// Deleting a project: a page of its own where the person types the project's name

async function deletePage(c: Context<ConsoleEnv>, error?: string) {
  const projectId = c.req.param("project_id") ?? "";
  const project = await getProject(c.env, c.get("consoleTeam").id, projectId);
  return page(
    c,
    { title: `Delete ${project.name}?`, active: "logs", status: error ? 422 : 200 },
    <ConfirmForm
      action={teamPath(c, `logs/${projectId}/delete`)}
      question={
        <>
          Delete the project <strong>{project.name}</strong>? Its ingest token stops working at once, and every entry, stream, alert and firing of it is
          deleted. This cannot be undone.
        </>
      }
      typeName={project.name}
      error={error}
      button="Delete project"
      cancel={teamPath(c, `logs/${projectId}`)}
      testid="confirm-delete-project"
    />,
  );
}

logsPages.get("/logs/:project_id/delete", (c) => {
  requireRole(c, "developer");
  return deletePage(c);
});

logsPages.post("/logs/:project_id/delete", async (c) => {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const projectId = c.req.param("project_id");
  const project = await getProject(c.env, teamId, projectId);
  if ((await formText(c, "confirm_name")).trim() !== project.name) return deletePage(c, "confirm name: type the name of the project exactly to delete it");
  await deleteProject(c.env, teamId, projectId);
  return redirectTo(c, "logs", "deleted");
});
