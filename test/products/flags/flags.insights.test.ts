// Insights (evaluations per variant per hour, last evaluated), sent at the end of their window
// whatever comes next and never twice, and the stale list.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { flushInsights, setInsightsWindow } from "../../../src/products/flags/flags.insights";
import { call, json } from "../../helpers/api";
import { createFlag, evaluate, flagsTeam } from "./flags-helpers";

afterEach(() => {
  setClock(null);
  setInsightsWindow(null);
});

/** One evaluation of flag `w` with its own ExecutionContext, returned so its waitUntil work can be awaited. */
async function evaluateIn(key: string): Promise<ExecutionContext> {
  const ctx = createExecutionContext();
  const res = await call("POST", "flags/evaluate", { key, body: { environment: "production", context: { key: "u" }, flags: ["w"] }, ctx });
  expect(res.status).toBe(200);
  return ctx;
}

/** The evaluations of flag `w` the store holds (the insights route reads the store; it sends nothing itself). */
async function stored(key: string): Promise<number> {
  const hours: Array<{ evaluations: number }> = (await json(await call("GET", "flags/w/insights", { key }))).data.hours;
  return hours.reduce((sum, h) => sum + h.evaluations, 0);
}

const DAY = 86_400_000;

describe("flags: insights and stale flags", () => {
  it("counts evaluations per variant and hour, and when a flag was last evaluated", async () => {
    const start = Date.UTC(2031, 2, 3, 10, 15);
    setClock(start);
    const { key, teamId } = await flagsTeam();
    await createFlag(key, { key: "i", environments: { production: { enabled: true } } });
    await evaluate(key, "production", { key: "a" });
    await evaluate(key, "production", { key: "b" }, ["i"]);
    await evaluate(key, "development", { key: "b" }, ["i"]);
    await flushInsights(env, teamId);
    const data = (await json(await call("GET", "flags/i/insights", { key }))).data;
    expect(data.last_evaluated_at).toBe(new Date(start).toISOString());
    expect(data.hours).toEqual([
      { environment: "development", hour: "2031-03-03T10", variant: "off", evaluations: 1, exposures: 0 },
      { environment: "production", hour: "2031-03-03T10", variant: "on", evaluations: 2, exposures: 0 },
    ]);
  });

  it("counts noted within a window are sent when it ends with no later evaluation, and never twice", async () => {
    // A window of 2 s (10 s in production): the read right after the second evaluation comes well within it.
    setInsightsWindow(2_000);
    setClock(Date.UTC(2031, 2, 3, 10, 15));
    const { key, teamId } = await flagsTeam();
    await createFlag(key, { key: "w", environments: { production: { enabled: true } } });
    // The team's first count in this isolate is sent at once (no send yet in this window).
    await waitOnExecutionContext(await evaluateIn(key));
    expect(await stored(key)).toBe(1);
    // The next, within the window, waits: its request leaves a timer in its waitUntil that sends it at the window's end.
    const later = await evaluateIn(key);
    expect(await stored(key)).toBe(1);
    await waitOnExecutionContext(later);
    expect(await stored(key)).toBe(2);
    // Sent once: nothing is left to send.
    await flushInsights(env, teamId);
    expect(await stored(key)).toBe(2);
  });

  it("a later evaluation after the window sends the pending counts first; the timer then sends nothing more", async () => {
    setInsightsWindow(2_000);
    const start = Date.UTC(2031, 2, 3, 10, 15);
    setClock(start);
    const { key } = await flagsTeam();
    await createFlag(key, { key: "w", environments: { production: { enabled: true } } });
    await waitOnExecutionContext(await evaluateIn(key));
    setClock(start + 1);
    const withTimer = await evaluateIn(key);
    // The window is over by the clock: this evaluation sends both pending counts itself.
    setClock(start + 3_000);
    await waitOnExecutionContext(await evaluateIn(key));
    expect(await stored(key)).toBe(3);
    // The first timer finds its counts sent and sends nothing: no count twice.
    await waitOnExecutionContext(withTimer);
    expect(await stored(key)).toBe(3);
  });

  it("stale: not evaluated for 30 days, or one variant everywhere unchanged for 30 days", async () => {
    const start = Date.UTC(2031, 5, 1);
    setClock(start);
    const { key, teamId } = await flagsTeam();
    await createFlag(key, { key: "forgotten", tags: ["t1"] });
    await createFlag(key, { key: "launched", environments: { production: { enabled: true } } });
    await createFlag(key, {
      key: "experiment",
      environments: {
        production: {
          enabled: true,
          fallthrough: {
            rollout: {
              variations: [
                { variant: "on", weight: 50_000 },
                { variant: "off", weight: 50_000 },
              ],
            },
          },
        },
      },
    });
    setClock(start + 31 * DAY);
    await evaluate(key, "production", { key: "u" }, ["launched", "experiment"]);
    await flushInsights(env, teamId);
    const stale = (await json(await call("GET", "flags?stale=true", { key }))).data;
    expect(stale.map((f: { key: string; stale_reason: string }) => [f.key, f.stale_reason])).toEqual([
      ["forgotten", "not_evaluated"],
      ["launched", "one_variant"],
    ]);
    const tagged = (await json(await call("GET", "flags?tag=t1", { key }))).data;
    expect(tagged.map((f: { key: string }) => f.key)).toEqual(["forgotten"]);
  });
});
