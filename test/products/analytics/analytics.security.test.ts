// What analytics keeps and spends: no IP address or user agent in the store or any answer, the
// daily salt (a new one each UTC day, the old one deleted, so visitors cannot be followed across
// days), the public bucket refusing a flood from one IP, the cap per site and client network, one
// `events` unit per counted event (none for a drop or a refusal) and the monthly-quota 429.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { call, expectError, json, setupTeam } from "../../helpers/api";
import { failMeterUnits, ipCounter, setUsed, usedOf } from "../../helpers/usage";
import { setClock } from "../../../src/platform/clock";
import { getMeter } from "../../../src/platform/rate-limit/limiter";
import { namedObject } from "../../../src/platform/durable-objects";
import { dailySalt } from "../../../src/products/analytics/analytics.store";
import { NETWORK_MINUTE_CAP, networkDayCap } from "../../../src/products/analytics/analytics-ingest.service";
import { SALT_OBJECT } from "../../../src/products/analytics/store/analytics-salt";
import { createSite, dump, pageview, query, sendEvent, settle } from "./analytics.helpers";

afterEach(() => setClock(null));

const UNIQUE_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 UniqueAgentMarker/9.9";

describe("privacy", () => {
  it("stores no IP address and no user agent: the store, the salt store and the query answers hold neither", async () => {
    const team = await setupTeam();
    const site = await createSite(team.key);
    const ips = ["203.0.113.77", "2001:db8:4242::1"];
    for (const ip of ips) await sendEvent(pageview(site.id, "https://example.com/private", { p: { plan: "pro" } }), { ip, ua: UNIQUE_UA });
    await settle();
    const held = JSON.stringify(await dump(site.id));
    expect(JSON.parse(held).events).toHaveLength(2);
    for (const needle of [...ips, "2001:db8", UNIQUE_UA, "UniqueAgentMarker", "Windows NT", "Chrome/124"]) expect(held).not.toContain(needle);
    const salt = JSON.stringify(await namedObject(env.ANALYTICS_SALT, SALT_OBJECT).held());
    for (const needle of [...ips, "UniqueAgentMarker"]) expect(salt).not.toContain(needle);
    const answer = JSON.stringify(
      await query(team.key, {
        site_id: site.id,
        metrics: ["visitors", "pageviews"],
        date_range: "day",
        dimensions: ["event:page", "visit:source", "visit:country"],
      }),
    );
    for (const needle of [...ips, "UniqueAgentMarker"]) expect(answer).not.toContain(needle);
    expect(JSON.parse(answer).results).toEqual([{ dimensions: ["/private", "Direct / None", null], metrics: [2, 2] }]);
  });

  it("salts visitors per UTC day: the same person is another visitor tomorrow, and yesterday's salt is gone", async () => {
    const team = await setupTeam();
    const site = await createSite(team.key);
    const day1 = Date.UTC(2031, 2, 3, 23, 50);
    setClock(day1);
    await sendEvent(pageview(site.id), { ip: "198.51.100.9" });
    await sendEvent(pageview(site.id, "https://example.com/2"), { ip: "198.51.100.9" });
    const salt1 = await namedObject(env.ANALYTICS_SALT, SALT_OBJECT).held();
    expect(salt1?.day).toBe("2031-03-03");
    setClock(day1 + 20 * 60_000);
    await sendEvent(pageview(site.id, "https://example.com/3"), { ip: "198.51.100.9" });
    await settle();
    const visitors = (await dump(site.id)).events.map((e) => e.visitor);
    expect(visitors[0]).toBe(visitors[1]);
    expect(visitors[2]).not.toBe(visitors[0]);
    const salt2 = await namedObject(env.ANALYTICS_SALT, SALT_OBJECT).held();
    expect(salt2?.day).toBe("2031-03-04");
    expect(salt2?.salt).not.toBe(salt1?.salt);
    // The object holds one salt; asked for the old day it never draws or gives the old one again.
    expect(await dailySalt(env, "2031-03-03")).toBe(salt2?.salt);
    // Two visitors that day-crossing, one per day, in the day query.
    const days = await query(team.key, { site_id: site.id, metrics: ["visitors"], date_range: ["2031-03-03", "2031-03-04"], dimensions: ["time:day"] });
    expect(days.results).toEqual([
      { dimensions: ["2031-03-03"], metrics: [1] },
      { dimensions: ["2031-03-04"], metrics: [1] },
    ]);
  });
});

describe("abuse and metering", () => {
  it("refuses a flood from one IP with the public bucket (the 201st request of a minute)", async () => {
    const team = await setupTeam();
    const site = await createSite(team.key);
    // One window for the whole flood, whatever the real clock does meanwhile.
    setClock(Date.UTC(2031, 6, 1, 9, 0, 1));
    const ip = `192.0.2.${Math.floor(Math.random() * 200) + 1}`;
    // Bots are answered 202 without a unit but still count in the bucket.
    for (let i = 0; i < 200; i++) expect((await sendEvent(pageview(site.id), { ip, ua: "curl/8" })).status).toBe(202);
    const refused = await sendEvent(pageview(site.id), { ip });
    expect(refused.status).toBe(429);
    const body = await json(refused);
    expect(body.error).toBe("Rate limit exceeded");
    expect(body.retry_after).toBeGreaterThan(0);
    // Its unit, taken beside the bucket's count, was given back: the bots cost none either.
    expect(await usedOf(team.teamId, "analytics")).toBe(0);
    // Malformed and unknown-site requests from that IP are refused by the bucket too, first.
    await expectError(await sendEvent(null, { ip, raw: "{" }), 429, { error: "Rate limit exceeded", retry_after: body.retry_after });
    // Another address is not affected.
    expect((await sendEvent(pageview(site.id), { ip: "192.0.2.250" })).status).toBe(202);
    expect(await usedOf(team.teamId, "analytics")).toBe(1);
  });

  it("counts an IPv6 visitor in the public bucket by its /64: a full /64 is refused from any of its addresses, the next /64 is not", async () => {
    const team = await setupTeam();
    const site = await createSite(team.key);
    setClock(Date.UTC(2031, 6, 1, 9, 0, 1));
    await ipCounter("public", "2001:db8:71:1::1").hit(Date.UTC(2031, 6, 1, 9, 0, 0) / 1000, 200);
    expect((await sendEvent(pageview(site.id), { ip: "2001:db8:71:1:ffff::2" })).status).toBe(429);
    expect((await sendEvent(pageview(site.id), { ip: "2001:db8:71:2::1" })).status).toBe(202);
    expect(await usedOf(team.teamId, "analytics")).toBe(1);
  });

  it(`holds one client network to ${NETWORK_MINUTE_CAP} events a minute per site, giving the refused units back`, async () => {
    const team = await setupTeam({ plan: "pro" });
    const site = await createSite(team.key);
    setClock(Date.UTC(2031, 4, 1, 12, 0, 1));
    // Several addresses of one IPv6 /64 are one network.
    const answers = [];
    for (let i = 0; i < NETWORK_MINUTE_CAP + 3; i++) answers.push((await sendEvent(pageview(site.id), { ip: `2001:db8:1:2::${(i % 50) + 1}` })).status);
    expect(answers.filter((s) => s === 202)).toHaveLength(NETWORK_MINUTE_CAP);
    expect(answers.slice(NETWORK_MINUTE_CAP)).toEqual([429, 429, 429]);
    // Another network still counts.
    expect((await sendEvent(pageview(site.id), { ip: "2001:db8:9:9::1" })).status).toBe(202);
    await settle();
    expect((await dump(site.id)).events).toHaveLength(NETWORK_MINUTE_CAP + 1);
    expect(await usedOf(team.teamId, "analytics")).toBe(NETWORK_MINUTE_CAP + 1);
  });

  it("an unlimited plan's events wait for no meter call: each counted event is one unit, in fewer meter calls than events; a bot none", async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const site = await createSite(team.key);
    const ask = vi.spyOn(getMeter(env), "ask");
    onTestFinished(() => ask.mockRestore());
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => sendEvent(pageview(site.id), { ip: `198.18.${i}.2` })));
    expect(answers.map((res) => res.status)).toEqual(Array(30).fill(202));
    const bot = await sendEvent(pageview(site.id), { ip: "198.18.99.2", ua: "Googlebot/2.1 (+http://www.google.com/bot.html)" });
    expect(bot.headers.get("x-analytics-dropped")).toBe("bot");
    expect(await usedOf(team.teamId, "analytics")).toBe(30);
    const units = ask.mock.calls.filter(([, , item]) => item.quota?.service === "analytics").map(([, , item]) => item.quota!.amount);
    expect(units.reduce((a, b) => a + b, 0)).toBe(30);
    expect(units.length).toBeLessThan(30);
  });

  it("a limited plan's event answers 503 when the meter cannot take its unit: nothing stored, nothing spent", async () => {
    const team = await setupTeam({ plan: "pro" });
    const site = await createSite(team.key);
    const { ask } = failMeterUnits("analytics");
    const res = await sendEvent(pageview(site.id), { ip: "198.18.201.1" });
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("Event could not be counted; retry later");
    ask.mockRestore();
    await settle();
    expect((await dump(site.id)).events).toHaveLength(0);
    expect(await usedOf(team.teamId, "analytics")).toBeNull();
  });

  it("caps one network's events a day at a fiftieth of the plan's monthly limit", () => {
    expect(networkDayCap("free")).toBe(200);
    expect(networkDayCap("pro")).toBe(20_000);
    expect(networkDayCap("enterprise")).toBe(100_000);
  });

  it("spends one events unit per counted event, none for drops or refusals, and answers the monthly-quota 429", async () => {
    const team = await setupTeam({ plan: "free" });
    const site = await createSite(team.key);
    await sendEvent(pageview(site.id));
    await sendEvent(pageview(site.id, "https://example.com/x"), { ua: "Googlebot/2.1 (+http://www.google.com/bot.html)" });
    await sendEvent(pageview(site.id, "https://elsewhere.org/"));
    await sendEvent(null, { raw: "{}" });
    expect(await usedOf(team.teamId, "analytics")).toBe(1);
    await setUsed(team.teamId, "analytics", 10_000);
    await expectError(await sendEvent(pageview(site.id, "https://example.com/late")), 429, { error: "Monthly usage limit exceeded. Upgrade your plan." });
    await settle();
    expect((await dump(site.id)).events.map((e) => e.page)).toEqual(["/"]);
    // GET /usage shows the service.
    const usage = (await json(await call("GET", "usage", { key: team.key }))).data;
    expect(usage.services.analytics).toMatchObject({ metric: "events", used: 10_000, limit: 10_000 });
  });

  it("never limits an enterprise team's units", async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const site = await createSite(team.key);
    await setUsed(team.teamId, "analytics", 50_000_000);
    expect((await sendEvent(pageview(site.id))).status).toBe(202);
  });
});
