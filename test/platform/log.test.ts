// The logger (src/platform/log.ts): one JSON line per event, and what identifies the work from the
// scope it runs in — the request id in a request (its waitUntil work included), the job in a cron run.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AppEnv } from "../../src/env";
import { cronTable, defineCron, runScheduled, SCHEDULES } from "../../src/platform/jobs/cron";
import { currentLogScope, log, withLogScope } from "../../src/platform/log";
import { requestContext } from "../../src/platform/request-context";

function spyConsole() {
  const spies = {
    info: vi.spyOn(console, "log").mockImplementation(() => {}),
    warn: vi.spyOn(console, "warn").mockImplementation(() => {}),
    error: vi.spyOn(console, "error").mockImplementation(() => {}),
  };
  const lines = (level: keyof typeof spies) => spies[level].mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
  return { spies, lines };
}

afterEach(() => vi.restoreAllMocks());

describe("log", () => {
  it("writes one JSON line per event on the console method of its level, fields after the message", () => {
    const { spies, lines } = spyConsole();
    log.info("swept", { count: 2 });
    log.warn("key suspended", { key_id: "k1" });
    log.error("failed", { error: String(new Error("boom")) });
    expect(spies.info).toHaveBeenCalledOnce();
    expect(String(spies.info.mock.calls[0][0])).not.toContain("\n");
    expect(lines("info")).toEqual([{ level: "info", msg: "swept", count: 2 }]);
    expect(lines("warn")).toEqual([{ level: "warn", msg: "key suspended", key_id: "k1" }]);
    expect(lines("error")).toEqual([{ level: "error", msg: "failed", error: "Error: boom" }]);
  });

  it("adds the scope of the work, nested scopes adding to the outer one, and nothing outside it", async () => {
    const { lines } = spyConsole();
    await withLogScope({ queue: "mail-sends", message_id: "m1" }, async () => {
      await Promise.resolve();
      withLogScope({ attempts: 2 }, () => log.error("inner"));
      log.error("outer");
    });
    log.error("outside");
    expect(lines("error")).toEqual([
      { level: "error", msg: "inner", queue: "mail-sends", message_id: "m1", attempts: 2 },
      { level: "error", msg: "outer", queue: "mail-sends", message_id: "m1" },
      { level: "error", msg: "outside" },
    ]);
    expect(currentLogScope()).toEqual({});
  });

  it("carries the request id of the request it runs in, in its waitUntil work too, and keeps two requests apart", async () => {
    const { lines } = spyConsole();
    const app = new Hono<AppEnv>();
    app.use("*", requestContext());
    app.get("/work", (c) => {
      log.info("in the handler");
      c.executionCtx.waitUntil(
        (async () => {
          await new Promise((resolve) => setTimeout(resolve, 1));
          log.info("after the answer");
        })(),
      );
      return c.text("ok");
    });
    const ids: string[] = [];
    await Promise.all(
      ["req-a", "req-b"].map(async (id) => {
        const ctx = createExecutionContext();
        const res = await app.fetch(new Request("https://x/work", { headers: { "x-request-id": id } }), env, ctx);
        await waitOnExecutionContext(ctx);
        ids.push(res.headers.get("x-request-id") ?? "");
      }),
    );
    expect(ids.sort()).toEqual(["req-a", "req-b"]);
    const logged = lines("info")
      .map((l) => `${l.request_id} ${l.msg}`)
      .sort();
    expect(logged).toEqual(["req-a after the answer", "req-a in the handler", "req-b after the answer", "req-b in the handler"]);
  });

  it("names the cron expression and the job on what a cron job logs", async () => {
    const { lines } = spyConsole();
    const job = defineCron({ name: "tidy", schedule: "hourly", run: async () => log.info("tidied", { deleted: 3 }) });
    await runScheduled(cronTable([job]), SCHEDULES.hourly, env);
    expect(lines("info")).toEqual([{ level: "info", msg: "tidied", cron: SCHEDULES.hourly, job: "tidy", deleted: 3 }]);
  });
});
