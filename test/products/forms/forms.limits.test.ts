// Floods: one IP is refused by the `public` bucket across forms; one network flooding one form is
// refused by the form's cap for that network while other networks and the team's other forms go
// on; one network's daily share of the team's month (forms.limits.ts).
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { getMeter } from "../../../src/platform/rate-limit/limiter";
import { setClock } from "../../../src/platform/clock";
import { FORM_POSTS_PER_MINUTE, networkDailyCap } from "../../../src/products/forms/forms.limits";
import { PLATFORM_BUCKET_LIMITS as BUCKET_LIMITS } from "../../../src/platform/rate-limit/buckets";
import { planTable } from "../../../src/platform/plans";
import { json, setupTeam } from "../../helpers/api";
import { failMeterUnits, ipCounter, usedOf } from "../../helpers/usage";
import { createForm, postJson, storeSql } from "./forms.helpers";

describe("public form limits", () => {
  // One minute window for each flood, whatever the real clock does while it runs (a loop of 200
  // posts on a loaded machine can cross a minute and start the counts again).
  beforeEach(() => setClock(Date.UTC(2031, 6, 1, 9, 0, 1)));
  afterEach(() => setClock(null));

  it("refuses a flood to one form from one network by the form's cap; other networks and forms still post", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key);
    const other = await createForm(key);
    const ip = "198.51.100.7";
    const statuses: number[] = [];
    for (let i = 0; i < FORM_POSTS_PER_MINUTE + 3; i++) statuses.push((await postJson(form.id, { i: String(i) }, { ip })).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(FORM_POSTS_PER_MINUTE);
    expect(statuses.slice(FORM_POSTS_PER_MINUTE)).toEqual([429, 429, 429]);
    const refused = await postJson(form.id, { x: "y" }, { ip });
    expect(await json(refused)).toEqual({ error: "Rate limit exceeded", retry_after: expect.any(Number) });
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect((await postJson(form.id, { x: "y" }, { ip: "198.51.100.8" })).status).toBe(200);
    expect((await postJson(other.id, { x: "y" }, { ip })).status).toBe(200);
    // An IPv6 /64 is one network.
    const v6 = [];
    for (let i = 0; i < FORM_POSTS_PER_MINUTE + 1; i++) v6.push((await postJson(other.id, { i: "v6" }, { ip: `2001:db8:1:2::${i + 1}` })).status);
    expect(v6.at(-1)).toBe(429);
    const kept = await storeSql<{ n: number }>(form.id, "SELECT count(*) AS n FROM submissions");
    expect(kept[0]!.n).toBe(FORM_POSTS_PER_MINUTE + 1);
  });

  it("refuses a flood from one IP across many forms by the public bucket", async () => {
    const { key, teamId } = await setupTeam({ plan: "enterprise" });
    const forms = [];
    for (let i = 0; i < 25; i++) forms.push(await createForm(key, { name: `f${i}` }));
    const ip = "198.51.100.99";
    let refusedAt = -1;
    for (let i = 0; i < BUCKET_LIMITS.public + 1; i++) {
      const res = await postJson(forms[i % forms.length]!.id, { i: String(i) }, { ip });
      if (res.status === 429) {
        refusedAt = i;
        break;
      }
      expect(res.status).toBe(200);
    }
    expect(refusedAt).toBe(BUCKET_LIMITS.public);
    // The refused post's unit, taken beside the bucket's count, was given back; the next post from
    // that IP is refused from this isolate's memory, before any look-up.
    expect(await usedOf(teamId, "forms")).toBe(BUCKET_LIMITS.public);
    expect((await postJson(forms[0]!.id, { i: "again" }, { ip })).status).toBe(429);
    expect(await usedOf(teamId, "forms")).toBe(BUCKET_LIMITS.public);
  });

  it("counts an IPv6 client in the public bucket by its /64: a full /64 is refused from any of its addresses, the next /64 is not", async () => {
    const { key, teamId } = await setupTeam({ plan: "enterprise" });
    const form = await createForm(key);
    await ipCounter("public", "2001:db8:70:1::1").hit(Date.UTC(2031, 6, 1, 9, 0, 0) / 1000, BUCKET_LIMITS.public);
    expect((await postJson(form.id, { x: "y" }, { ip: "2001:db8:70:1:ffff::2" })).status).toBe(429);
    expect((await postJson(form.id, { x: "y" }, { ip: "2001:db8:70:2::1" })).status).toBe(200);
    expect(await usedOf(teamId, "forms")).toBe(1);
  });

  it("gives one network at most 1/62 of a plan's month a day (half the month over 31 days), none for enterprise", () => {
    expect(networkDailyCap("free")).toBe(16);
    expect(networkDailyCap("pro")).toBe(Math.floor(50_000 / 62));
    expect(networkDailyCap("enterprise")).toBeNull();
    // Over a 31-day month one network spends at most half the month's units.
    for (const plan of ["free", "starter", "pro", "scale"] as const)
      expect(networkDailyCap(plan)! * 31).toBeLessThanOrEqual(planTable()[plan].monthly.forms! / 2);
  });

  it("the caps are counters of the client network in its block's object, counted after its bucket in one call: a refused bucket counts none", async () => {
    const { key, teamId } = await setupTeam({ plan: "free" });
    const form = await createForm(key);
    const r = crypto.getRandomValues(new Uint8Array(1));
    const ip = `198.51.${r[0]}.7`;
    const counter = ipCounter("public", ip);
    const rows = () =>
      runInDurableObject(counter.stub, (_instance, state) =>
        state.storage.sql.exec<{ name: string; count: number }>(`SELECT name, count FROM counters WHERE name LIKE '%${ip}%' ORDER BY name`).toArray(),
      );
    expect((await postJson(form.id, { x: "y" }, { ip })).status).toBe(200);
    expect(await rows()).toEqual([
      { name: `ip:${ip}`, count: 1 },
      { name: `ip:${ip}:form:${form.id}`, count: 1 },
      { name: `ipday:${ip}:forms:${teamId}`, count: 1 },
    ]);
    // The bucket full: refused, the caps not counted, the unit given back.
    await counter.hit(Date.UTC(2031, 6, 1, 9, 0, 0) / 1000, BUCKET_LIMITS.public - 1);
    expect((await postJson(form.id, { x: "y" }, { ip })).status).toBe(429);
    expect(await rows()).toEqual([
      { name: `ip:${ip}`, count: BUCKET_LIMITS.public + 1 },
      { name: `ip:${ip}:form:${form.id}`, count: 1 },
      { name: `ipday:${ip}:forms:${teamId}`, count: 1 },
    ]);
    expect(await usedOf(teamId, "forms")).toBe(1);
  });

  it("an unlimited plan's posts wait for no meter call: concurrent posts cost exactly their units, a spam post none", async () => {
    const { key, teamId } = await setupTeam({ plan: "enterprise" });
    const form = await createForm(key);
    const ask = vi.spyOn(getMeter(env), "ask");
    onTestFinished(() => ask.mockRestore());
    const posts = await Promise.all(Array.from({ length: 8 }, (_, i) => postJson(form.id, { i: String(i) }, { ip: `198.18.${i}.1` })));
    expect(posts.map((res) => res.status)).toEqual(Array(8).fill(200));
    // A filled honeypot answers as a success, is kept as spam and costs nothing (the unit given back in the batch).
    expect((await postJson(form.id, { i: "bot", _gotcha: "filled" }, { ip: "198.18.9.1" })).status).toBe(200);
    expect(await usedOf(teamId, "forms")).toBe(8);
    const units = ask.mock.calls.filter(([, , item]) => item.quota?.service === "forms").map(([, , item]) => item.quota!.amount);
    expect(units.reduce((a, b) => a + b, 0)).toBe(8);
    expect(units.length).toBeLessThan(9);
  });

  it("a limited plan's post answers 503 when the meter cannot take its unit: nothing stored, nothing spent", async () => {
    const { key, teamId } = await setupTeam({ plan: "pro" });
    const form = await createForm(key);
    const { ask } = failMeterUnits("forms");
    const res = await postJson(form.id, { x: "y" }, { ip: "198.18.200.1" });
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("The submission could not be counted; try again");
    ask.mockRestore();
    expect(await storeSql<{ n: number }>(form.id, "SELECT count(*) AS n FROM submissions")).toEqual([{ n: 0 }]);
    expect(await usedOf(teamId, "forms")).toBeNull();
  });

  it("refuses one network past its daily share of the team's month", async () => {
    const { key } = await setupTeam({ plan: "free" });
    const forms = [];
    for (let i = 0; i < 3; i++) forms.push(await createForm(key, { name: `f${i}` }));
    const ip = "198.51.100.50";
    const statuses: number[] = [];
    for (let i = 0; i < 18; i++) statuses.push((await postJson(forms[i % 3]!.id, { i: String(i) }, { ip })).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(networkDailyCap("free")!);
    expect(statuses.at(-1)).toBe(429);
  });
});
