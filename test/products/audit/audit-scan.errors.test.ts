// Bad input and abuse of scans: refused targets (422 when posted), and targets that redirect into
// a network, resolve inside one, never answer, redirect forever or send a huge body: the scan ends
// failed (or finished) within its limits and never reaches a forbidden address.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { processScan } from "../../../src/products/audit/audit-scan.consumer";
import { SCAN_LIMITS } from "../../../src/products/audit/audit-scan.fetch";
import { call, json } from "../../helpers/api";
import { newTeam } from "./audit-helpers";
import { answer, findings, GOOD_HEADERS, getScan, interceptTargets, startScan } from "./audit-scan-helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

const SITE = "https://site.example";

describe("refused when posted (422 invalid_params)", () => {
  it.each([
    ["missing", {}],
    ["not a string", { target_url: 42 }],
    ["malformed", { target_url: "not a url" }],
    ["another scheme", { target_url: "ftp://site.example/" }],
    ["credentials", { target_url: "https://user:pass@site.example/" }],
    ["a private address", { target_url: "https://10.0.0.1/" }],
    ["the metadata address", { target_url: "http://169.254.169.254/latest/meta-data/" }],
    ["an internal name", { target_url: "https://metadata.google.internal/" }],
    ["a single-label name", { target_url: "https://intranet/" }],
    ["this platform's own host", { target_url: "http://app.test/api/v1/usage" }],
  ])("%s", async (_, body) => {
    const team = await newTeam();
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    const res = await call("POST", `${team.base}/scans`, { key: team.key, body });
    expect(res.status).toBe(422);
    const out = await json(res);
    expect(out).toMatchObject({ data: null, error: { code: "invalid_params" } });
    expect(Object.keys(out.error.details)).toEqual(["target_url"]);
    expect(fetchSpy).not.toHaveBeenCalled();
    expect((await json(await call("GET", `${team.base}/scans`, { key: team.key }))).data).toEqual([]);
  });
});

/** A scan stored through the API whose message the test runs itself (with chosen limits). */
async function storedScan(target: string) {
  const team = await newTeam();
  const started = await startScan(team.key, team.base, target);
  const run = async (limits = SCAN_LIMITS) => {
    expect(await processScan(env, { scan_id: started.scan.id, team_id: team.teamId }, limits)).toMatch(/finished|failed/);
    return getScan(team.key, team.base, started.scan.id);
  };
  return { team, id: started.scan.id, run };
}

describe("SSRF through redirects and names", () => {
  it("a redirect to the metadata address fails the scan as a forbidden hop; the address is never fetched", async () => {
    const targets = interceptTargets({ [SITE]: () => new Response(null, { status: 302, headers: { location: "http://169.254.169.254/latest/meta-data/" } }) });
    const { run, team } = await storedScan(SITE);
    const scan = await run();
    expect(scan).toMatchObject({ status: "failed", score: null, grade: null, tests: [] });
    expect(scan.error).toMatch(/^forbidden hop: http:\/\/169\.254\.169\.254/);
    expect(targets.fetched).toEqual([`${SITE}/`]);
    expect(await findings(team.key, team.base)).toEqual([]);
  });

  it("a redirect to a name that resolves to a private address fails; the name is never fetched", async () => {
    const targets = interceptTargets(
      {
        [SITE]: () => new Response(null, { status: 301, headers: { location: "https://inside.example/admin" } }),
        "https://inside.example": answer(GOOD_HEADERS),
      },
      { "inside.example": ["10.0.0.7"] },
    );
    const scan = await (await storedScan(SITE)).run();
    expect(scan.status).toBe("failed");
    expect(scan.error).toBe("forbidden hop: inside.example resolves to 10.0.0.7, a private or internal address");
    expect(targets.fetched).toEqual([`${SITE}/`]);
  });

  it("a target whose name resolves inside (IPv6 link-local among public answers) is never fetched", async () => {
    const targets = interceptTargets({ [SITE]: answer(GOOD_HEADERS) }, { "site.example": ["93.184.216.34", "fe80::1"] });
    const scan = await (await storedScan(SITE)).run();
    expect(scan.status).toBe("failed");
    expect(scan.error).toMatch(/^forbidden hop: site\.example resolves to fe80::1/);
    expect(targets.fetched).toEqual([]);
  });

  it("a name that does not resolve is a DNS failure", async () => {
    interceptTargets({ [SITE]: answer(GOOD_HEADERS) }, { "site.example": null });
    const scan = await (await storedScan(SITE)).run();
    expect(scan).toMatchObject({ status: "failed", error: "DNS failure: site.example does not resolve" });
  });

  it("a resolver that cannot be asked is a DNS failure", async () => {
    vi.spyOn(globalThis, "fetch").mockRejectedValue(new TypeError("network down"));
    const scan = await (await storedScan(SITE)).run();
    expect(scan).toMatchObject({ status: "failed", error: "DNS failure: the resolver could not be asked about site.example" });
  });
});

describe("targets that abuse the limits", () => {
  it("a target that never answers fails with a timeout within the limit", async () => {
    interceptTargets({
      [SITE]: (request) => new Promise((_, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason))),
    });
    const { run } = await storedScan(SITE);
    const started = Date.now();
    const scan = await run({ ...SCAN_LIMITS, timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(scan).toMatchObject({ status: "failed", error: "timeout: no answer within 0.3 s" });
  });

  it("a target that redirects forever fails as a redirect loop after 5 redirects", async () => {
    let n = 0;
    const targets = interceptTargets({ [SITE]: () => new Response(null, { status: 302, headers: { location: `/hop/${++n}` } }) });
    const scan = await (await storedScan(SITE)).run();
    expect(scan).toMatchObject({ status: "failed", error: "redirect loop: more than 5 redirects" });
    expect(targets.fetched).toHaveLength(6);
  });

  it("a redirect back to an address already seen is a loop at once", async () => {
    interceptTargets({ [SITE]: (request) => new Response(null, { status: 307, headers: { location: new URL(request.url).pathname === "/" ? "/a" : "/" } }) });
    const scan = await (await storedScan(SITE)).run();
    expect(scan).toMatchObject({ status: "failed", error: `redirect loop: ${SITE}/ was reached twice` });
  });

  it("a target that sends an endless body is read up to 1 MB, never whole, and graded", async () => {
    let pulled = 0;
    const chunk = new Uint8Array(64 * 1024);
    interceptTargets({
      [SITE]: () =>
        new Response(
          new ReadableStream({
            pull(controller) {
              pulled += chunk.byteLength;
              controller.enqueue(chunk);
            },
          }),
          { headers: GOOD_HEADERS },
        ),
    });
    const scan = await (await storedScan(SITE)).run();
    expect(scan).toMatchObject({ status: "finished", grade: "A+" });
    expect(pulled).toBeGreaterThanOrEqual(SCAN_LIMITS.readBytes);
    expect(pulled).toBeLessThanOrEqual(SCAN_LIMITS.readBytes + 4 * chunk.byteLength);
  });

  it("a connection that gives no HTTP answer fails the scan", async () => {
    interceptTargets({});
    const scan = await (await storedScan(SITE)).run();
    expect(scan.status).toBe("failed");
    expect(scan.error).toMatch(/^connection failed: /);
  });

  it("the limits are 10 s, 5 redirects and 1 MB", () => {
    expect(SCAN_LIMITS).toMatchObject({ timeoutMs: 10_000, maxRedirects: 5, readBytes: 1024 * 1024 });
  });
});

describe("the strict bucket", () => {
  it("shares its counter with report share: 30 scans, then a share is refused with the platform's 429", async () => {
    // One window for all 32 requests: on the real clock a minute could turn between the 30th and the
    // 31st (seen once in CI, the 31st answered 202 in a fresh window).
    setClock(Math.floor(Date.now() / 60_000) * 60_000 + 1_000);
    const team = await newTeam();
    interceptTargets({});
    for (let i = 0; i < 30; i++) {
      const res = await call("POST", `${team.base}/scans`, { key: team.key, body: { target_url: `https://s${i}.example/` } });
      expect(res.status).toBe(202);
      expect(res.headers.get("x-ratelimit-limit")).toBe("30");
    }
    const limited = [
      await call("POST", `${team.base}/scans`, { key: team.key, body: { target_url: "https://more.example/" } }),
      await call("POST", `${team.base}/reports/share`, { key: team.key, body: { channel: "link" } }),
    ];
    for (const res of limited) {
      expect(res.status).toBe(429);
      const body = await json(res);
      expect(Object.keys(body).sort()).toEqual(["error", "retry_after"]);
      expect(body.error).toBe("Rate limit exceeded");
      expect(res.headers.get("retry-after")).toBe(String(body.retry_after));
    }
    // Reads are not in the strict bucket.
    expect((await call("GET", `${team.base}/scans`, { key: team.key })).status).toBe(200);
  });
});
