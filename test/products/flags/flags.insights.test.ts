// Insights (evaluations per variant per hour, last evaluated) and the stale list.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { flushInsights } from "../../../src/products/flags/flags.insights";
import { call, json } from "../../helpers/api";
import { createFlag, evaluate, flagsTeam } from "./flags-helpers";

afterEach(() => setClock(null));

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
