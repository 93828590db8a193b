// POST /api/event: the Plausible body in its long and short forms, as JSON or text/plain, counted
// into the site's store; every refusal (400, 404, 413) counting nothing; bots and foreign hosts
// answered 202 and not counted; the page without its query string unless the site keeps it; the
// referrer reduced to a source; country from request.cf; CORS; and the tracker script.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { call, expectError, setupTeam } from "../../helpers/api";
import { setClock } from "../../../src/platform/clock";
import { app } from "../../../src/app";
import { MAX_EVENT_BODY_BYTES } from "../../../src/products/analytics/analytics.schemas";
import { CHROME_UA, createSite, dump, pageview, sendEvent, settle } from "./analytics.helpers";

afterEach(() => setClock(null));

async function siteOf(body: Record<string, unknown> = { domain: "example.com" }) {
  const team = await setupTeam();
  return { team, site: await createSite(team.key, body) };
}

describe("POST /api/event", () => {
  it("counts long and short field names, JSON and text/plain, answering 202 ok", async () => {
    const { site } = await siteOf();
    const long = await sendEvent({ name: "pageview", url: "https://example.com/a", domain: site.id, referrer: null }, { contentType: "application/json" });
    expect(long.status).toBe(202);
    expect(await long.text()).toBe("ok");
    expect(long.headers.get("x-analytics-dropped")).toBeNull();
    const short = await sendEvent({
      n: "Signup",
      u: "https://www.example.com/b?x=1",
      d: site.id,
      r: "",
      p: { plan: "pro", seats: 3, trial: true, gone: null },
      extra: "ignored",
    });
    expect(short.status).toBe(202);
    await settle();
    const { events } = await dump(site.id);
    expect(events.map((e) => [e.name, e.page, e.props])).toEqual([
      ["pageview", "/a", null],
      ["Signup", "/b", JSON.stringify({ plan: "pro", seats: "3", trial: "true" })],
    ]);
    // One visitor: same address and user agent on the same day.
    expect(new Set(events.map((e) => e.visitor)).size).toBe(1);
    expect(events[0].visitor).toMatch(/^[0-9a-f]{16}$/);
  });

  it("accepts props sent as a JSON string, as older trackers do", async () => {
    const { site } = await siteOf();
    expect((await sendEvent(pageview(site.id, "https://example.com/", { p: JSON.stringify({ a: "1" }) }))).status).toBe(202);
    await settle();
    expect((await dump(site.id)).events[0].props).toBe('{"a":"1"}');
  });

  it("keeps the query string only when the site says so", async () => {
    const { site } = await siteOf({ domain: "example.com", keep_query_string: true });
    await sendEvent(pageview(site.id, "https://example.com/search?q=shoes#top"));
    await settle();
    expect((await dump(site.id)).events[0].page).toBe("/search?q=shoes");
  });

  it("answers 400 {error} for malformed bodies and bad fields, counting nothing", async () => {
    const { site } = await siteOf();
    const cases: Array<[string, string]> = [
      ["{not json", "Malformed JSON in request body"],
      ["[1,2]", "The body must be a JSON object"],
      [JSON.stringify({ u: "https://example.com/", d: site.id }), "name is required"],
      [JSON.stringify({ n: "pageview", d: site.id }), "url is required"],
      [JSON.stringify({ n: "pageview", u: "https://example.com/" }), "domain is required"],
      [JSON.stringify({ n: "pageview", u: "javascript:alert(1)", d: site.id }), "url must be an absolute http(s) URL"],
      [JSON.stringify({ n: "pageview", u: `https://example.com/${"a".repeat(2000)}`, d: site.id }), "url must be at most 2000 characters"],
      [JSON.stringify({ n: "x".repeat(121), u: "https://example.com/", d: site.id }), "name must be at most 120 characters"],
      [
        JSON.stringify(pageview(site.id, "https://example.com/", { p: Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`k${i}`, "v"])) })),
        "props may have at most 30 keys",
      ],
      [JSON.stringify(pageview(site.id, "https://example.com/", { p: { big: "v".repeat(2001) } })), "prop values must be at most 2000 characters"],
      [JSON.stringify(pageview(site.id, "https://example.com/", { p: { nested: { a: 1 } } })), "prop nested must be a string, number or boolean"],
      [JSON.stringify(pageview(site.id, "https://example.com/", { p: [1] })), "props must be an object"],
      [JSON.stringify(pageview(site.id, "https://example.com/", { r: 5 })), "referrer must be a string"],
    ];
    for (const [raw, error] of cases) await expectError(await sendEvent(null, { raw }), 400, { error });
    // The limits themselves pass: 120 characters, 30 props of 2,000.
    const props = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, "v".repeat(2000)]));
    expect((await sendEvent({ n: "x".repeat(120), u: "https://example.com/", d: site.id, p: props })).status).toBe(202);
    await settle();
    expect((await dump(site.id)).events).toHaveLength(1);
  });

  it("answers 413 past the body limit and 404 for an unknown site", async () => {
    await expectError(await sendEvent(null, { raw: "x".repeat(MAX_EVENT_BODY_BYTES + 1) }), 413, { error: "Payload too large (max 256KB)" });
    await expectError(await sendEvent(pageview(crypto.randomUUID())), 404, { error: "Site not found" });
    await expectError(await sendEvent(pageview("example.com")), 404, { error: "Site not found" });
  });

  it("answers bots, pages off the site's domain and engagement events 202 without counting them", async () => {
    const { site } = await siteOf();
    const bots = [
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
      "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
      "curl/8.4.0",
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36",
      "",
    ];
    for (const ua of bots) {
      const res = await sendEvent(pageview(site.id), { ua });
      expect(res.status, ua).toBe(202);
      expect(res.headers.get("x-analytics-dropped"), ua).toBe("bot");
    }
    for (const url of ["https://evil.com/", "https://notexample.com/", "https://example.com.evil.com/"]) {
      const res = await sendEvent(pageview(site.id, url));
      expect(res.status).toBe(202);
      expect(res.headers.get("x-analytics-dropped")).toBe("foreign_host");
    }
    // Plausible's tracker's engagement events (scroll depth, time on page) are no event of ours.
    const engagement = await sendEvent({ n: "engagement", u: "https://example.com/", d: site.id, sd: 80, e: 12000 });
    expect(engagement.status).toBe(202);
    expect(engagement.headers.get("x-analytics-dropped")).toBe("engagement");
    // Under the domain counts.
    expect((await sendEvent(pageview(site.id, "https://blog.example.com/post"))).headers.get("x-analytics-dropped")).toBeNull();
    await settle();
    expect((await dump(site.id)).events.map((e) => e.page)).toEqual(["/post"]);
  });

  it("reduces the referrer to a source, Plausible's way", async () => {
    const { site } = await siteOf();
    const cases: Array<[string, string | null, string]> = [
      ["https://example.com/", "https://www.google.co.uk/search?q=x", "Google"],
      ["https://example.com/", "https://t.co/abc", "Twitter"],
      ["https://example.com/", "https://www.someblog.net/post/1", "someblog.net"],
      ["https://example.com/?utm_source=newsletter", "https://www.google.com/", "newsletter"],
      ["https://example.com/?ref=ig", null, "Instagram"],
      ["https://example.com/", "https://example.com/other", ""],
      ["https://example.com/", "http://localhost:3000/", ""],
      ["https://example.com/", "not a url", ""],
      ["https://example.com/", null, ""],
    ];
    // Each from its own address, so no visit carries its source over to the next.
    for (const [i, [url, referrer]] of cases.entries()) await sendEvent({ n: "pageview", u: url, d: site.id, r: referrer }, { ip: `198.51.100.${100 + i}` });
    await settle();
    expect((await dump(site.id)).events.map((e) => e.source)).toEqual(cases.map(([, , source]) => source));
  });

  it("keeps a visit's first source for its later pages (a 30-minute session)", async () => {
    const { site } = await siteOf();
    const t0 = Date.UTC(2026, 5, 1, 10, 0);
    setClock(t0);
    await sendEvent({ n: "pageview", u: "https://example.com/", d: site.id, r: "https://news.ycombinator.com/" });
    setClock(t0 + 10 * 60_000);
    await sendEvent({ n: "pageview", u: "https://example.com/pricing", d: site.id, r: "https://example.com/" });
    setClock(t0 + 60 * 60_000);
    await sendEvent({ n: "pageview", u: "https://example.com/docs", d: site.id, r: null });
    await settle();
    expect((await dump(site.id)).events.map((e) => [e.page, e.source])).toEqual([
      ["/", "Hacker News"],
      ["/pricing", "Hacker News"],
      ["/docs", ""],
    ]);
  });

  it("takes the country from request.cf, and none where it is absent", async () => {
    const { site } = await siteOf();
    const request = (cf?: object) =>
      new Request("http://app.test/api/event", {
        method: "POST",
        body: JSON.stringify(pageview(site.id)),
        headers: { "content-type": "text/plain", "user-agent": CHROME_UA, "cf-connecting-ip": "198.51.100.50" },
        ...(cf ? { cf } : {}),
      } as RequestInit);
    const { createExecutionContext } = await import("cloudflare:test");
    expect((await app.fetch(request({ country: "DE" }), env, createExecutionContext())).status).toBe(202);
    expect((await app.fetch(request({ country: "XX" }), env, createExecutionContext())).status).toBe(202);
    expect((await app.fetch(request(), env, createExecutionContext())).status).toBe(202);
    await settle();
    expect((await dump(site.id)).events.map((e) => e.country)).toEqual(["DE", "", ""]);
  });

  it("answers browsers' CORS preflight and puts CORS on the answer", async () => {
    const pre = await call("OPTIONS", "/api/event", {
      headers: { origin: "https://example.com", "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
    const { site } = await siteOf();
    const res = await sendEvent(pageview(site.id), { headers: { origin: "https://example.com" } });
    expect(res.status).toBe(202);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("GET /a/script.js", () => {
  it("serves the tracker: under 2 KB, sendBeacon, history navigation, no cookie", async () => {
    const res = await call("GET", "/a/script.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("javascript");
    const script = await res.text();
    expect(new TextEncoder().encode(script).byteLength).toBeLessThan(2048);
    expect(script).toContain("sendBeacon");
    expect(script).toContain("pushState");
    expect(script).toContain("popstate");
    expect(script).toContain("/api/event");
    expect(script).not.toContain("cookie");
  });
});
