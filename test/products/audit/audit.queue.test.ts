import { describe, expect, it } from "vitest";
import { call, json } from "../../helpers/api";
import { newTeam, waitForStatus } from "./audit-helpers";

describe("audit export through the real queue", () => {
  it("the report-export queue delivers to the consumer, which exports to R2", async () => {
    const team = await newTeam();
    const res = await call("POST", `${team.base}/reports/export`, { key: team.key, body: { format: "json" } });
    expect(res.status).toBe(202);
    const record = (await json(res)).data;
    const done = await waitForStatus(team.key, team.base, record.id, "exported");
    expect(done.exported_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });
});
