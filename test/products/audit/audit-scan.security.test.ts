// Tenancy and scopes of scans and schedules: another team's org or resource answers 404 and
// changes nothing; reading needs audit:read, starting and scheduling audit:write.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { getDb } from "../../../src/db/client";
import { auditScans } from "../../../src/db/schema";
import { newScanRow } from "../../../src/products/audit/audit-scan.service";
import { addKey, call, json } from "../../helpers/api";
import { auditBase, newTeam } from "./audit-helpers";

afterEach(() => vi.restoreAllMocks());

async function expectNotFound(res: Response, label: string) {
  const body = await json(res);
  expect({ label, status: res.status, code: body.error?.code, data: body.data }).toEqual({ label, status: 404, code: "not_found", data: null });
}

describe("scans across teams", () => {
  it("another team's org_id, scan or schedule answers 404 and changes nothing", async () => {
    const owner = await newTeam();
    const scan = newScanRow({ teamId: owner.teamId, projectId: "web-app" }, "https://site.example/");
    await getDb(env.DB).insert(auditScans).values(scan);
    const schedule = (
      await json(await call("POST", `${owner.base}/scan-schedules`, { key: owner.key, body: { target_url: "https://site.example/", every: "day" } }))
    ).data;
    const intruder = await newTeam();
    const fetchSpy = vi.spyOn(globalThis, "fetch");

    // The owner's org in the path with the intruder's key.
    for (const [method, path, body] of [
      ["POST", `${owner.base}/scans`, { target_url: "https://site.example/" }],
      ["GET", `${owner.base}/scans`, undefined],
      ["GET", `${owner.base}/scans/${scan.id}`, undefined],
      ["POST", `${owner.base}/scan-schedules`, { target_url: "https://x.example/", every: "day" }],
      ["GET", `${owner.base}/scan-schedules`, undefined],
      ["DELETE", `${owner.base}/scan-schedules/${schedule.id}`, undefined],
    ] as const) {
      await expectNotFound(await call(method, path, { key: intruder.key, body }), `${method} ${path}`);
    }
    // The owner's ids under the intruder's own org.
    await expectNotFound(await call("GET", `${intruder.base}/scans/${scan.id}`, { key: intruder.key }), "scan id");
    await expectNotFound(await call("DELETE", `${intruder.base}/scan-schedules/${schedule.id}`, { key: intruder.key }), "schedule id");
    expect((await json(await call("GET", `${intruder.base}/scans`, { key: intruder.key }))).data).toEqual([]);
    // Another project of the same team does not see them either.
    await expectNotFound(await call("GET", `${auditBase(owner, "other")}/scans/${scan.id}`, { key: owner.key }), "other project");

    expect(fetchSpy).not.toHaveBeenCalled();
    expect((await json(await call("GET", `${owner.base}/scan-schedules`, { key: owner.key }))).data).toHaveLength(1);
    expect((await json(await call("GET", `${owner.base}/scans`, { key: owner.key }))).data.map((s: { id: string }) => s.id)).toEqual([scan.id]);
  });

  it("audit:read reads, only audit:write starts and schedules scans", async () => {
    const team = await newTeam();
    const reader = await addKey(team.teamId, ["audit:read"]);
    expect((await call("GET", `${team.base}/scans`, { key: reader.key })).status).toBe(200);
    expect((await call("GET", `${team.base}/scan-schedules`, { key: reader.key })).status).toBe(200);
    expect((await call("POST", `${team.base}/scans`, { key: reader.key, body: { target_url: "https://site.example/" } })).status).toBe(403);
    expect((await call("POST", `${team.base}/scan-schedules`, { key: reader.key, body: { target_url: "https://site.example/", every: "day" } })).status).toBe(
      403,
    );
    const other = await addKey(team.teamId, ["logs:read"]);
    expect((await call("GET", `${team.base}/scans`, { key: other.key })).status).toBe(403);
    expect((await call("POST", `${team.base}/scans`, { body: { target_url: "https://site.example/" } })).status).toBe(401);
  });
});
