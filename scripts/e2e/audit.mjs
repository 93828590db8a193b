// Audit reports over real HTTP: a finding, the summary envelope, a JSON export written to R2 by
// the report-export queue consumer of wrangler dev, its download, and a share link whose public
// viewer page and download link work until the share is revoked; a scan of a local site that opens
// a finding for a missing header, and the scheduled scan (the hourly cron) that closes it once fixed.
import { createServer } from "node:http";
import { assert, eventually, expectStatus, need, request } from "./http.mjs";

/**
 * A local site for scans (ALLOW_PRIVATE_TARGETS lets wrangler dev reach loopback): answers every
 * request with the headers in `headers`, which a check changes to "fix" the site.
 */
async function startSite(headers) {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", ...headers });
    res.end("<!doctype html><title>scan target</title><p>hello</p>");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((resolve) => server.close(resolve)) };
}

export async function auditChecks({ url, createTeamWithKey, defer }) {
  const { key, teamId } = await createTeamWithKey({ name: "Audit e2e" });
  const base = `/api/v1/orgs/${teamId}/projects/web-app/audit`;
  const api = (method, path, body) => request(url, method, `${base}${path}`, { key, body });
  const state = {};
  const siteHeaders = {
    "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
  };
  const site = await startSite(siteHeaders);
  defer(site.close);
  /** Waits for a scan to end and returns it. */
  const scanned = (id) =>
    eventually(
      async () => {
        const res = expectStatus(await api("GET", `/scans/${id}`), 200, "get scan");
        const scan = res.body.data;
        return scan.status === "finished" || scan.status === "failed" ? scan : Promise.reject(new Error(`scan is still ${scan.status}`));
      },
      { timeoutMs: 30_000 },
    );
  const xctoFinding = async () => {
    const list = expectStatus(await api("GET", "/findings?per_page=100"), 200, "findings");
    return list.body.data.find((f) => f.test === "x-content-type-options" && f.target_url === site.url);
  };

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

    "audit: a scan of a local site grades it and opens a finding for the missing header": async () => {
      const queued = expectStatus(await api("POST", "/scans", { target_url: site.url }), 202, "start scan");
      assert.equal(queued.body.data.status, "queued");
      const again = expectStatus(await api("POST", "/scans", { target_url: site.url }), 200, "same target within 3 minutes");
      assert.equal(again.body.data.id, queued.body.data.id);
      const scan = await scanned(queued.body.data.id);
      assert.equal(scan.status, "finished", `scan ended ${scan.status}: ${scan.error}`);
      assert.match(scan.grade, /^[A-F][+-]?$/);
      const xcto = scan.tests.find((t) => t.name === "x-content-type-options");
      assert.equal(xcto.pass, false);
      assert.equal(xcto.result, "x-content-type-options-not-implemented");
      const finding = await xctoFinding();
      assert.ok(finding, "a finding for x-content-type-options was opened");
      assert.equal(finding.source, "scan");
      assert.equal(finding.status, "new");
      assert.equal(finding.priority_score, 5);
      state.findingId = finding.id;
    },

    "audit: the header fixed, the next (scheduled) scan closes the finding with a passed verification": async () => {
      const findingId = need(state.findingId, "scan finding");
      siteHeaders["x-content-type-options"] = "nosniff";
      // Within 3 minutes a POST would answer the first scan; a schedule's scan is queued by the hourly job.
      const schedule = expectStatus(await api("POST", "/scan-schedules", { target_url: site.url, every: "day" }), 201, "schedule");
      const cron = await fetch(`${url}/__scheduled?cron=0+*+*+*+*`);
      assert.equal(cron.status, 200, `the hourly cron answered ${cron.status}`);
      await cron.arrayBuffer();
      const scheduled = await eventually(
        async () => {
          const list = expectStatus(await api("GET", `/scans?target_url=${encodeURIComponent(site.url)}`), 200, "list scans");
          const scan = list.body.data.find((s) => s.schedule_id === schedule.body.data.id);
          return scan ? scan : Promise.reject(new Error("no scheduled scan yet"));
        },
        { timeoutMs: 20_000 },
      );
      const scan = await scanned(scheduled.id);
      assert.equal(scan.status, "finished", `scan ended ${scan.status}: ${scan.error}`);
      assert.equal(scan.tests.find((t) => t.name === "x-content-type-options").pass, true);
      const finding = expectStatus(await api("GET", `/findings/${findingId}`), 200, "finding");
      assert.equal(finding.body.data.status, "resolved");
      assert.deepEqual(
        finding.body.data.verifications.map((v) => v.result),
        ["passed"],
      );
    },
  };
}
