// Logs over real HTTP: a project and its ingest token, single and NDJSON batch ingest (with the
// sender's timestamp), the entry query, a live tail read as Server-Sent Events, and a threshold alert fired by the every-minute cron (triggered through
// wrangler dev's /__scheduled) whose webhook notification reaches a local receiver and whose
// firing is listed in the alert's history.
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
        name: "e2e errors",
        level: "error",
        threshold: 3,
        window_minutes: 5,
        notify_webhook: `${receiver.url}/alerts`,
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
        key: token,
        raw: `${lines.join("\n")}\n`,
        headers: { "content-type": "application/x-ndjson" },
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
      assert.ok(
        all.body.data.every((e) => e.timestamp === e.created_at),
        "without a timestamp the entry's time is its receive time",
      );
      assert.equal(all.body.data.find((e) => e.message === `${marker} single`).stream, "e2e");
    },

    "logs: the sender's timestamp is kept beside the receive time": async () => {
      const project = need(state.project, "project");
      const at = new Date(Date.now() - 3_600_000).toISOString();
      const one = await request(url, "POST", "/api/v1/logs/ingest", {
        key: state.token,
        body: { message: `${marker} stamped`, timestamp: at, host: "e2e-host" },
      });
      expectStatus(one, 202, "single ingest with a timestamp");
      const found = expectStatus(await api("GET", `/logs/projects/${project.id}/entries?q=${encodeURIComponent(`${marker} stamped`)}`), 200, "query stamped");
      assert.equal(found.body.data[0].timestamp, at);
      assert.notEqual(found.body.data[0].created_at, at);
      assert.deepEqual(found.body.data[0].metadata, { host: "e2e-host" });
      const old = await request(url, "POST", "/api/v1/logs/ingest", { key: state.token, body: { message: "old", timestamp: "2020-01-01T00:00:00Z" } });
      expectStatus(old, 422, "a timestamp past the window");
    },

    "logs: a live tail streams the next matching entry as a Server-Sent Event": async () => {
      const project = need(state.project, "project");
      const abort = new AbortController();
      const res = await fetch(`${url}/api/v1/logs/projects/${project.id}/tail?level=warn&q=${encodeURIComponent(marker)}`, {
        headers: { authorization: `Bearer ${key}` },
        signal: abort.signal,
      });
      try {
        assert.equal(res.status, 200, `tail answered ${res.status}`);
        assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        const nextBlock = async () => {
          for (;;) {
            const at = buffer.indexOf("\n\n");
            if (at !== -1) {
              const block = buffer.slice(0, at);
              buffer = buffer.slice(at + 2);
              return block;
            }
            const { value, done } = await reader.read();
            if (done) throw new Error("the tail ended before its first event");
            buffer += decoder.decode(value, { stream: true });
          }
        };
        assert.match(await nextBlock(), /^retry: /, "the opening block comes first");
        // An entry the filter leaves out, then one it takes: the first data event is the second.
        const batch = [
          JSON.stringify({ message: `${marker} tail info`, level: "info" }),
          JSON.stringify({ message: `${marker} tail warn`, level: "warn", stream: "e2e" }),
        ].join("\n");
        expectStatus(
          await request(url, "POST", "/api/v1/logs/ingest/batch", { key: state.token, raw: batch, headers: { "content-type": "application/x-ndjson" } }),
          202,
          "batch for the tail",
        );
        let block;
        do block = await Promise.race([nextBlock(), new Promise((_, reject) => setTimeout(() => reject(new Error("no tail event within 10 s")), 10_000))]);
        while (!block.startsWith("data: "));
        const entry = JSON.parse(block.slice(6));
        assert.equal(entry.message, `${marker} tail warn`);
        assert.equal(entry.project_id, project.id);
        assert.equal(entry.stream, "e2e");
      } finally {
        abort.abort();
      }
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
      const history = expectStatus(await api("GET", `/logs/alerts/${alert.id}/firings`), 200, "list firings");
      assert.equal(history.body.data.length, 1);
      assert.equal(history.body.data[0].id, body.firing_id);
      assert.equal(history.body.data[0].count, 3);
      assert.equal(history.body.data[0].resolved_at, null, "the firing is open while its window is over the threshold");
    },

    "logs: an alert resolves when its window falls back under the threshold, and its history says so": async () => {
      const project = need(state.project, "project");
      const token = need(state.token, "ingest token");
      const alert = expectStatus(
        await api("POST", `/logs/projects/${project.id}/alerts`, {
          name: "e2e fatal",
          level: "fatal",
          threshold: 2,
          window_minutes: 1,
          notify_webhook: `${receiver.url}/resolve`,
        }),
        201,
        "create alert",
      ).body.data;
      // Two fatal entries stamped 50 s ago: inside the 1-minute window now, out of it 10 s from now.
      const stamp = Date.now() - 50_000;
      const lines = [0, 1].map((i) => JSON.stringify({ message: `${marker} fatal ${i}`, level: "fatal", timestamp: stamp })).join("\n");
      expectStatus(
        await request(url, "POST", "/api/v1/logs/ingest/batch", { key: token, raw: lines, headers: { "content-type": "application/x-ndjson" } }),
        202,
        "fatal batch",
      );
      const cron = () => fetch(`${url}/__scheduled?cron=*+*+*+*+*`).then((r) => r.text());
      await cron();
      const fired = JSON.parse((await receiver.waitFor((r) => r.path === "/resolve" && JSON.parse(r.text).type === "log.alert.triggered")).text);
      assert.equal(fired.alert.id, alert.id);
      assert.equal(fired.count, 2);
      await new Promise((r) => setTimeout(r, Math.max(0, stamp + 61_000 - Date.now())));
      await cron();
      const hit = await receiver.waitFor((r) => r.path === "/resolve" && JSON.parse(r.text).type === "log.alert.resolved");
      const resolved = JSON.parse(hit.text);
      assert.equal(resolved.firing_id, fired.firing_id);
      assert.equal(hit.headers["x-alert-firing-id"], fired.firing_id);
      assert.equal(resolved.count, 0);
      const history = expectStatus(await api("GET", `/logs/alerts/${alert.id}/firings`), 200, "list firings");
      assert.deepEqual(
        history.body.data.map((f) => [f.id, f.count, f.resolved_at]),
        [[fired.firing_id, 2, resolved.resolved_at]],
      );
    },
  };
}
