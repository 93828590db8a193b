// Audit reports over real HTTP: a finding, the summary envelope, a JSON export written to R2 by
// the report-export queue consumer of wrangler dev, its download, and a share link whose public
// viewer page and download link work until the share is revoked.
import { assert, eventually, expectStatus, need, request } from "./http.mjs";

export async function auditChecks({ url, createTeamWithKey }) {
  const { key, teamId } = await createTeamWithKey({ name: "Audit e2e" });
  const base = `/api/v1/orgs/${teamId}/projects/web-app/audit`;
  const api = (method, path, body) => request(url, method, `${base}${path}`, { key, body });
  const state = {};

  return {
    "audit: create a finding; the summary uses the envelope": async () => {
      const finding = expectStatus(await api("POST", "/findings", { title: "SQL injection in /search", priority_score: 8 }), 201, "create finding");
      assert.equal(finding.body.error, null);
      assert.equal(finding.body.data.status, "new");
      const summary = expectStatus(await api("GET", "/reports/summary"), 200, "summary");
      assert.equal(summary.body.error, null);
      assert.equal(summary.body.meta.request_id, summary.headers.get("x-request-id"));
      assert.equal(summary.body.data.open_findings, 1);
      assert.equal(summary.body.data.risk_burn_down.length, 7);
      assert.equal(summary.body.data.risk_burn_down.at(-1).open_risk_score, 8);
      state.summary = summary.body.data;
    },

    "audit: a JSON export is written by the queue consumer and downloads as the snapshot": async () => {
      need(state.summary, "summary");
      const queued = expectStatus(await api("POST", "/reports/export", { format: "json" }), 202, "export");
      assert.equal(queued.body.data.status, "queued");
      const id = queued.body.data.id;
      const exported = await eventually(
        async () => {
          const res = expectStatus(await api("GET", `/reports/${id}`), 200, "get report");
          if (res.body.data.status === "failed") throw new Error("the export failed");
          return res.body.data.status === "exported" ? res.body.data : Promise.reject(new Error(`status is still ${res.body.data.status}`));
        },
        { timeoutMs: 20_000 },
      );
      assert.ok(exported.exported_at);
      const download = await fetch(`${url}${base}/reports/${id}/download`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(download.status, 200, `download answered ${download.status}`);
      assert.match(download.headers.get("content-type"), /^application\/json/);
      const artefact = JSON.parse(await download.text());
      assert.equal(artefact.report.id, id);
      assert.equal(artefact.report.status, "exported");
      assert.deepEqual(artefact.report.snapshot, state.summary);
      state.reportId = id;
    },

    "audit: share link → viewer page → download link; revoked → 404": async () => {
      const reportId = need(state.reportId, "exported report");
      const share = expectStatus(await api("POST", "/reports/share", { channel: "link", report_id: reportId }), 200, "share");
      assert.equal(share.body.data.id, reportId);
      const shareUrl = share.body.data.share_url;
      assert.match(shareUrl, /\/insights\/audit\/reports\/shared\/[\w.-]+$/);

      const viewer = await fetch(shareUrl);
      const page = await viewer.text();
      assert.equal(viewer.status, 200, `viewer answered ${viewer.status}: ${page.slice(0, 300)}`);
      assert.match(viewer.headers.get("content-type"), /^text\/html/);
      const link = /href="([^"]*\/insights\/audit\/reports\/download\/[^"]+)"/.exec(page)?.[1];
      assert.ok(link, `no download link in the viewer page: ${page.slice(0, 500)}`);
      const file = await fetch(new URL(link.replaceAll("&amp;", "&"), shareUrl));
      assert.equal(file.status, 200, `download link answered ${file.status}`);
      assert.equal(JSON.parse(await file.text()).report.id, reportId);

      const revoke = expectStatus(await api("DELETE", "/reports/share"), 200, "revoke");
      assert.deepEqual(revoke.body.data.ids, [reportId]);
      const dead = await fetch(shareUrl);
      assert.equal(dead.status, 404, "the viewer answers 404 once the share is revoked");
      await dead.arrayBuffer();
    },
  };
}
