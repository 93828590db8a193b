// Deleting a log project in the console: a page of its own where the project's name is typed, the
// API's service (the token stops working, the project is gone), 303 to the projects list that
// reloads without repeating anything; a wrong name at 422 changing nothing; a viewer refused
// (403); another team's project 404.
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/api";
import { consoleTeam, followRedirect, memberOf, page } from "../helpers/console";
import { ingest } from "../products/logs/helpers";

async function withProject(role: "owner" | "developer" = "developer") {
  const team = await consoleTeam(role);
  const res = await call("POST", "logs/projects", { key: team.key, body: { name: "checkout" } });
  expect(res.status).toBe(201);
  const project = (await json(res)).data as { id: string; ingest_token: string };
  return { ...team, projectId: project.id, token: project.ingest_token };
}

const projectStatus = async (key: string, id: string) => (await call("GET", `logs/projects/${id}`, { key })).status;

describe("logs console: deleting a project", () => {
  it("offers the step on the project page, deletes after the name is typed, and the list says so once", async () => {
    const t = await withProject();
    const base = `/console/teams/${t.teamId}/logs/${t.projectId}`;
    const project = await (await page("GET", base, { cookie: t.cookie })).text();
    expect(project).toContain(`href="${base}/delete"`);
    const confirm = await page("GET", `${base}/delete`, { cookie: t.cookie });
    expect(confirm.status).toBe(200);
    const html = await confirm.text();
    expect(html).toContain('data-testid="confirm-delete-project"');
    expect(html).toContain("Type <strong>checkout</strong> to confirm");

    const res = await page("POST", `${base}/delete`, { cookie: t.cookie, form: { confirm: "yes", confirm_name: "checkout" } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/console/teams/${t.teamId}/logs?notice=deleted`);
    const list = await followRedirect(res, t.cookie);
    expect(await list.text()).toContain("The project was deleted");
    expect(await projectStatus(t.key, t.projectId)).toBe(404);
    // Its token stopped working.
    expect((await ingest(t.token, { message: "late" })).status).toBe(401);
    // The back button's re-post finds nothing to delete.
    expect((await page("POST", `${base}/delete`, { cookie: t.cookie, form: { confirm: "yes", confirm_name: "checkout" } })).status).toBe(404);
  });

  it("answers a wrong name at 422 naming the field, and deletes nothing", async () => {
    const t = await withProject("owner");
    const base = `/console/teams/${t.teamId}/logs/${t.projectId}`;
    for (const name of ["", "Checkout", "check"]) {
      const res = await page("POST", `${base}/delete`, { cookie: t.cookie, form: { confirm: "yes", confirm_name: name } });
      expect(res.status, name).toBe(422);
      expect(await res.text()).toContain("confirm name: type the name of the project exactly");
    }
    expect(await projectStatus(t.key, t.projectId)).toBe(200);
  });

  it("refuses a viewer (403), answers another team's project 404, and deletes nothing", async () => {
    const t = await withProject("owner");
    const viewer = await memberOf(t.teamId, "viewer");
    const other = await consoleTeam("owner");
    const form = { confirm: "yes", confirm_name: "checkout" };
    expect((await page("GET", `/console/teams/${t.teamId}/logs/${t.projectId}/delete`, { cookie: viewer.cookie })).status).toBe(403);
    expect((await page("POST", `/console/teams/${t.teamId}/logs/${t.projectId}/delete`, { cookie: viewer.cookie, form })).status).toBe(403);
    expect(await (await page("GET", `/console/teams/${t.teamId}/logs/${t.projectId}`, { cookie: viewer.cookie })).text()).not.toContain(
      'data-testid="delete-project"',
    );
    expect((await page("POST", `/console/teams/${other.teamId}/logs/${t.projectId}/delete`, { cookie: other.cookie, form })).status).toBe(404);
    expect(await projectStatus(t.key, t.projectId)).toBe(200);
  });
});
