// Scan runs end to end in the pool: POST /scans, the Worker's queue handler runs the scan against a
// played target, GET /scans/:id shows the grade and tests, and the findings follow the scans.
import { afterEach, describe, expect, it, vi } from "vitest";
import { nowMs, setClock } from "../../../src/platform/clock";
import { call, json } from "../../helpers/api";
import { newTeam, patchFinding } from "./audit-helpers";
import { answer, findings, GOOD_HEADERS, getScan, interceptTargets, startScan, toHttps } from "./audit-scan-helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

const SITE = "https://site.example";
/** Moves the clock past the 3-minute same-target window. */
const later = () => setClock(new Date(nowMs() + 3 * 60_000 + 1000));

describe("a scan", () => {
  it("is queued (202), runs from the queue, and ends finished with score, grade and every test", async () => {
    const team = await newTeam();
    interceptTargets({ [SITE]: answer(GOOD_HEADERS, ["sid=SECRETVALUE; Secure; HttpOnly; SameSite=Lax"]), "http://site.example": toHttps });
    const started = await startScan(team.key, team.base, `${SITE}/path?q=1#frag`);
    expect(started.scan).toMatchObject({ status: "queued", target_url: `${SITE}/path?q=1` });
    expect(started.queue.pending).toHaveLength(1);
    const scan = await started.run();
    expect(scan).toMatchObject({ status: "finished", grade: "A+", error: null, final_url: `${SITE}/path?q=1`, status_code: 200 });
    expect(scan.score).toBe(125);
    expect(scan.tests).toHaveLength(8);
    for (const t of scan.tests) {
      expect(Object.keys(t)).toEqual(expect.arrayContaining(["name", "pass", "result", "score_modifier", "description"]));
      expect(t.pass).toBe(true);
    }
    expect(scan.started_at).toBeTruthy();
    expect(scan.finished_at).toBeTruthy();
    // Cookie names and flags only.
    expect(JSON.stringify(scan)).not.toContain("SECRETVALUE");
    expect(scan.tests.find((t: { name: string }) => t.name === "cookies").data).toEqual([{ name: "sid", secure: true, http_only: true, same_site: "Lax" }]);
    expect(await findings(team.key, team.base)).toEqual([]);
  });

  it("any HTTP answer is a result: a 500 with no headers is finished (and graded F)", async () => {
    const team = await newTeam();
    interceptTargets({ [SITE]: answer({}, [], 500) });
    const scan = await (await startScan(team.key, team.base, SITE)).run();
    // CSP -25, HSTS -20, X-Content-Type-Options -5, framing -20: 30.
    expect(scan).toMatchObject({ status: "finished", status_code: 500, score: 30, grade: "D" });
    // No plain http answer: the redirection test passes as "not needed".
    expect(scan.tests.find((t: { name: string }) => t.name === "redirection")).toMatchObject({ pass: true, result: "redirection-not-needed-no-http" });
  });

  it("follows up to 5 redirects, each checked, and grades the final answer", async () => {
    const team = await newTeam();
    const targets = interceptTargets({
      [SITE]: () => new Response(null, { status: 302, headers: { location: "https://www.site.example/home" } }),
      "https://www.site.example": answer(GOOD_HEADERS),
    });
    const scan = await (await startScan(team.key, team.base, SITE)).run();
    expect(scan).toMatchObject({ status: "finished", final_url: "https://www.site.example/home" });
    expect(targets.resolved).toEqual(expect.arrayContaining(["site.example", "www.site.example"]));
  });
});

describe("the 3-minute rule and the list", () => {
  it("a second scan of the target within 3 minutes answers 200 with the first; later, a new one", async () => {
    const team = await newTeam();
    interceptTargets({ [SITE]: answer(GOOD_HEADERS) });
    const first = await startScan(team.key, team.base, SITE);
    const again = await startScan(team.key, team.base, `${SITE}/`, 200);
    expect(again.scan.id).toBe(first.scan.id);
    expect(again.queue.pending).toHaveLength(0);
    // Another target is another scan.
    const other = await startScan(team.key, team.base, "https://other.example/");
    expect(other.scan.id).not.toBe(first.scan.id);
    later();
    const third = await startScan(team.key, team.base, SITE);
    expect(third.scan.id).not.toBe(first.scan.id);

    const all = await json(await call("GET", `${team.base}/scans`, { key: team.key }));
    expect(all.data.map((s: { id: string }) => s.id)).toEqual([third.scan.id, other.scan.id, first.scan.id]);
    expect(all.meta.pagination).toMatchObject({ total: 3, page: 1 });
    const filtered = await json(await call("GET", `${team.base}/scans?target_url=${encodeURIComponent(SITE)}`, { key: team.key }));
    expect(filtered.data.map((s: { id: string }) => s.id)).toEqual([third.scan.id, first.scan.id]);
  });

  it("parallel scans of one target store one scan", async () => {
    const team = await newTeam();
    interceptTargets({ [SITE]: answer(GOOD_HEADERS) });
    const answers = await Promise.all(Array.from({ length: 8 }, () => call("POST", `${team.base}/scans`, { key: team.key, body: { target_url: SITE } })));
    const bodies = await Promise.all(answers.map((r) => json(r)));
    expect(answers.filter((r) => r.status === 202)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(7);
    expect(new Set(bodies.map((b) => b.data.id)).size).toBe(1);
  });
});

describe("findings from scans", () => {
  it("opens one per failing test, closes it with a passed verification when fixed, reopens it as a regression", async () => {
    const team = await newTeam();
    const { "strict-transport-security": _, ...noHsts } = GOOD_HEADERS;
    const targets = interceptTargets({ [SITE]: answer(noHsts), "http://site.example": toHttps });

    const first = await (await startScan(team.key, team.base, SITE)).run();
    expect(first.tests.filter((t: { pass: boolean }) => !t.pass).map((t: { name: string }) => t.name)).toEqual(["strict-transport-security"]);
    let list = await findings(team.key, team.base);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      status: "new",
      source: "scan",
      target_url: `${SITE}/`,
      test: "strict-transport-security",
      priority_score: 20,
      regression: false,
    });
    const id = list[0].id;
    let summary = (await json(await call("GET", `${team.base}/reports/summary`, { key: team.key }))).data;
    expect(summary.open_findings).toBe(1);
    expect(summary.risk_burn_down[6].open_risk_score).toBe(20);

    // Still failing: kept, not duplicated.
    later();
    await (await startScan(team.key, team.base, SITE)).run();
    expect(await findings(team.key, team.base)).toHaveLength(1);

    // Fixed: closed with a passed verification.
    later();
    targets.set(SITE, answer(GOOD_HEADERS));
    await (await startScan(team.key, team.base, SITE)).run();
    const closed = (await json(await call("GET", `${team.base}/findings/${id}`, { key: team.key }))).data;
    expect(closed.status).toBe("resolved");
    expect(closed.verifications).toHaveLength(1);
    expect(closed.verifications[0].result).toBe("passed");
    expect(closed.status_history.map((h: { to: string }) => h.to)).toEqual(["new", "resolved"]);
    summary = (await json(await call("GET", `${team.base}/reports/summary`, { key: team.key }))).data;
    expect(summary).toMatchObject({ open_findings: 0, verification_pass_rate: 1 });
    expect(summary.risk_burn_down[6].open_risk_score).toBe(0);

    // Broken again: the same finding, reopened, a regression that the summary counts (the rate is
    // open regressions over terminal findings: one closed finding of a person's keeps it defined).
    expect((await call("POST", `${team.base}/findings`, { key: team.key, body: { title: "old", status: "resolved" } })).status).toBe(201);
    later();
    targets.set(SITE, answer(noHsts));
    await (await startScan(team.key, team.base, SITE)).run();
    list = (await findings(team.key, team.base)).filter((f) => f.test !== null);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id, status: "new", regression: true });
    summary = (await json(await call("GET", `${team.base}/reports/summary`, { key: team.key }))).data;
    expect(summary.open_findings).toBe(1);
    expect(summary.regression_rate).toBe(1);
  });

  it("a finding a person dismissed is never reopened nor closed by a scan", async () => {
    const team = await newTeam();
    const { "x-content-type-options": _, ...noXcto } = GOOD_HEADERS;
    const targets = interceptTargets({ [SITE]: answer(noXcto) });
    await (await startScan(team.key, team.base, SITE)).run();
    const [finding] = await findings(team.key, team.base);
    expect(finding.test).toBe("x-content-type-options");
    await patchFinding(team.key, team.base, finding.id, { status: "dismissed" });
    later();
    await (await startScan(team.key, team.base, SITE)).run();
    expect((await findings(team.key, team.base)).map((f) => f.status)).toEqual(["dismissed"]);
    later();
    targets.set(SITE, answer(GOOD_HEADERS));
    await (await startScan(team.key, team.base, SITE)).run();
    expect((await findings(team.key, team.base)).map((f) => f.status)).toEqual(["dismissed"]);
  });

  it("never duplicates a finding a person recorded for the same target and test, and keeps it theirs", async () => {
    const team = await newTeam();
    interceptTargets({ [SITE]: answer({ ...GOOD_HEADERS, "referrer-policy": "unsafe-url" }) });
    const res = await call("POST", `${team.base}/findings`, {
      key: team.key,
      body: { title: "Referrer leaks full URLs", priority_score: 3, target_url: SITE, test: "referrer-policy" },
    });
    expect(res.status).toBe(201);
    const manual = (await json(res)).data;
    expect(manual).toMatchObject({ source: "manual", target_url: `${SITE}/`, test: "referrer-policy" });
    await (await startScan(team.key, team.base, SITE)).run();
    const list = await findings(team.key, team.base);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: manual.id, source: "manual", status: "new", priority_score: 3 });
    // A second manual finding for the same target and test is refused.
    const dup = await call("POST", `${team.base}/findings`, { key: team.key, body: { title: "again", target_url: SITE, test: "referrer-policy" } });
    expect(dup.status).toBe(422);
    expect((await json(dup)).error.code).toBe("invalid_params");
  });

  it("a redelivered scan message changes nothing twice", async () => {
    const team = await newTeam();
    const { "strict-transport-security": _, ...noHsts } = GOOD_HEADERS;
    interceptTargets({ [SITE]: answer(noHsts) });
    const started = await startScan(team.key, team.base, SITE);
    const message = started.queue.pending[0];
    await started.run();
    started.queue.pending.push(message);
    await started.queue.deliver();
    expect(await findings(team.key, team.base)).toHaveLength(1);
    const summary = (await json(await call("GET", `${team.base}/reports/summary`, { key: team.key }))).data;
    expect(summary.open_findings).toBe(1);
    expect((await getScan(team.key, team.base, started.scan.id)).status).toBe("finished");
  });
});
