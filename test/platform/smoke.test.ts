import { describe, expect, it } from "vitest";
import { call, setupTeam, json } from "../helpers/api";

describe("smoke", () => {
  it("serves health and usage", async () => {
    const health = await call("GET", "/health");
    expect(health.status).toBe(200);
    const team = await setupTeam();
    const res = await call("GET", "usage", { key: team.key });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.data.plan).toBe("pro");
    expect(res.headers.get("x-ratelimit-limit")).toBe("6000");
  });
});
