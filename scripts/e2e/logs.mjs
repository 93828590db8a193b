// Logs over real HTTP: a project and its ingest token, single and NDJSON batch ingest, the
// entry query, and a threshold alert fired by the every-minute cron (triggered through
// wrangler dev's /__scheduled) whose webhook notification reaches a local receiver.
import { assert, expectStatus, need, request } from "./http.mjs";
import { startReceiver } from "./receiver.mjs";

export async function logsChecks({ url, createTeamWithKey, defer }) {
  const { key } = await createTeamWithKey({ name: "Logs e2e" });
  const receiver = await startReceiver();
  defer(() => receiver.close());
  const api = (method, path, body) => request(url, method, `/api/v1${path}`, { key, body });
  const marker = `e2e-${Date.now()}`;
  const state = {};

  return {
    "logs: create a project, its ingest token is shown once": async () => {
      const project = expectStatus(await api("POST", "/logs/projects", { name: "e2e api" }), 201, "create project");
      assert.match(project.body.data.ingest_token, /^lgt_/);
      state.project = project.body.data;
      state.token = project.body.data.ingest_token;
      const again = expectStatus(await api("GET", `/logs/projects/${state.project.id}`), 200, "get project");
      assert.equal(again.body.data.ingest_token, undefined, "the token must not be shown again");
    },

    "logs: an alert with a webhook to a local receiver": async () => {
      const project = need(state.project, "project");
      const alert = await api("POST", `/logs/projects/${project.id}/alerts`, {
        name: "e2e errors", level: "error", threshold: 3, window_minutes: 5, notify_webhook: `${receiver.url}/alerts`,
      });
      expectStatus(alert, 201, "create alert");
      assert.deepEqual(alert.body.data.channels, ["webhook"]);
      state.alert = alert.body.data;
    },

    "logs: single ingest answers 202, a team key on ingest answers 401": async () => {
      const token = need(state.token, "ingest token");
      const one = await request(url, "POST", "/api/v1/logs/ingest", { key: token, body: { message: `${marker} single`, level: "error", stream: "e2e" } });
      expectStatus(one, 202, "single ingest");
      assert.deepEqual(one.body, { ok: true });
      const withTeamKey = await request(url, "POST", "/api/v1/logs/ingest", { key, body: { message: "nope" } });
      expectStatus(withTeamKey, 401, "ingest with a team API key");
      assert.deepEqual(withTeamKey.body, { error: "Invalid or missing ingest token" });
    },

    "logs: an NDJSON batch with a bad line counts and drops": async () => {
      const token = need(state.token, "ingest token");
      const lines = [
        JSON.stringify({ message: `${marker} batch a`, level: "error", service: "api" }),
        JSON.stringify({ message: `${marker} batch b`, level: "error", service: "api" }),
        "not json",
        JSON.stringify({ message: `${marker} batch c`, level: "info" }),
      ];
      const batch = await request(url, "POST", "/api/v1/logs/ingest/batch", {
        key: token, raw: `${lines.join("\n")}\n`, headers: { "content-type": "application/x-ndjson" },
      });
      expectStatus(batch, 202, "batch ingest");
      assert.deepEqual(batch.body, { ok: true, count: 3, dropped: 1 });
    },

    "logs: the entry query finds the ingested entries": async () => {
      const project = need(state.project, "project");
      const errors = expectStatus(await api("GET", `/logs/projects/${project.id}/entries?level=error&q=${encodeURIComponent(marker)}`), 200, "query entries");
      assert.deepEqual(errors.body.data.map((e) => e.message).sort(), [`${marker} batch a`, `${marker} batch b`, `${marker} single`]);
      const all = expectStatus(await api("GET", `/logs/projects/${project.id}/entries?q=${encodeURIComponent(marker)}`), 200, "query all entries");
      assert.equal(all.body.data.length, 4);
      assert.equal(all.body.data.find((e) => e.message === `${marker} single`).stream, "e2e");
    },

    "logs: the cron fires the alert and the receiver gets the notification": async () => {
      const alert = need(state.alert, "alert");
      const cron = await fetch(`${url}/__scheduled?cron=*+*+*+*+*`);
      assert.equal(cron.status, 200, `GET /__scheduled answered ${cron.status} ${await cron.text()}`);
      const hit = await receiver.waitFor((r) => r.path === "/alerts");
      const body = JSON.parse(hit.text);
      assert.equal(body.type, "log.alert.triggered");
      assert.equal(body.alert.id, alert.id);
      assert.equal(body.count, 3);
      assert.equal(hit.headers["x-alert-firing-id"], body.firing_id);
      const after = expectStatus(await api("GET", `/logs/projects/${alert.project_id}/alerts`), 200, "list alerts");
      assert.ok(after.body.data[0].last_triggered_at, "last_triggered_at is set once the alert fired");
    },
  };
}
