// Sending domains (DESIGN.md "Sending domains"): a live key sends only from a domain verified for
// its team; verification over DNS-over-HTTPS (intercepted here; over real HTTP against a local
// resolver in the e2e run), the operator's direct verification, reserved domains, isolation.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin, call, expectError, json, setupTeam } from "../../helpers/api";
import { LIVE, send, sendBatch } from "./mail-helpers";

const NOT_VERIFIED = {
  error: "The sender's domain is not verified for this team; add it under /api/v1/domains and verify it",
  code: "domain_not_verified",
};

afterEach(() => vi.restoreAllMocks());

/** Answers DoH JSON look-ups with these TXT values for the names asked; records what was asked. */
function resolver(records: Record<string, string[]>, status = 200) {
  const asked: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const name = url.searchParams.get("name") ?? "";
    asked.push(`${url.origin}${url.pathname}?name=${name}&type=${url.searchParams.get("type")}`);
    const answer = (records[name] ?? []).map((value) => ({ name, type: 16, TTL: 300, data: `"${value}"` }));
    return new Response(JSON.stringify({ Status: 0, Answer: answer }), { status, headers: { "content-type": "application/dns-json" } });
  });
  return asked;
}

async function addDomain(key: string, name: string) {
  const res = await call("POST", "domains", { key, body: { name } });
  expect(res.status).toBe(201);
  return (await json(res)).data;
}

describe("sending domains", () => {
  it("regression: a live key cannot send as the platform or from a domain its team has not verified", async () => {
    const team = await setupTeam({ domains: [] });
    await expectError(await send(team.key, { ...LIVE, from: "Edge Platform <no-reply@edge-platform.dev>" }), 403, NOT_VERIFIED);
    await expectError(await send(team.key, { ...LIVE, from: "ceo@bank.example" }), 403, NOT_VERIFIED);
    await expectError(await send(team.key, LIVE), 403, NOT_VERIFIED);
    expect((await json(await call("GET", "emails", { key: team.key }))).data).toEqual([]);
    // Nobody can add the platform's own or the sandbox domain, nor their subdomains.
    for (const name of ["edge-platform.dev", "mail.edge-platform.dev", "sandbox.edge-platform.dev", "EDGE-PLATFORM.DEV."]) {
      await expectError(await call("POST", "domains", { key: team.key, body: { name } }), 422, {
        error: "Validation failed",
        details: { name: ["is reserved by the platform and cannot be added"] },
      });
      expect((await admin("POST", `teams/${team.teamId}/domains`, { name })).status).toBe(422);
    }
  });

  it("adds a pending domain with its TXT record, verifies it over DNS-over-HTTPS, then sends from it", async () => {
    const team = await setupTeam({ domains: [] });
    const domain = await addDomain(team.key, "Mail.Example.ORG.");
    expect(domain).toMatchObject({ name: "mail.example.org", status: "pending", verified_at: null });
    expect(domain.records).toEqual([{ type: "TXT", name: "_edge-platform.mail.example.org", value: expect.stringMatching(/^edp-verify=[0-9a-f]{32}$/) }]);
    await expectError(await send(team.key, { ...LIVE, from: "Shop <shop@mail.example.org>" }), 403, NOT_VERIFIED);

    // The record is missing, then wrong: 422 with what was found, still pending.
    resolver({});
    await expectError(await call("POST", `domains/${domain.id}/verify`, { key: team.key }), 422, {
      error: "Validation failed",
      details: { records: ["no TXT record found at _edge-platform.mail.example.org"] },
    });
    vi.restoreAllMocks();
    resolver({ "_edge-platform.mail.example.org": ["v=spf1 -all", "edp-verify=0000"] });
    const wrong = await call("POST", `domains/${domain.id}/verify`, { key: team.key });
    expect(wrong.status).toBe(422);
    expect((await json(wrong)).details.records[0]).toContain('"edp-verify=0000"');
    vi.restoreAllMocks();

    const asked = resolver({ "_edge-platform.mail.example.org": [domain.records[0].value] });
    const verified = await call("POST", `domains/${domain.id}/verify`, { key: team.key });
    expect(verified.status).toBe(200);
    expect((await json(verified)).data).toMatchObject({ id: domain.id, status: "verified", verified_at: expect.any(String) });
    expect(asked).toEqual([`${env.DNS_RESOLVER_URL}?name=_edge-platform.mail.example.org&type=TXT`]);
    vi.restoreAllMocks();
    expect((await send(team.key, { ...LIVE, from: "Shop <shop@mail.example.org>" })).status).toBe(201);
    // A subdomain of a verified domain is a domain of its own.
    await expectError(await send(team.key, { ...LIVE, from: "x@other.mail.example.org" }), 403, NOT_VERIFIED);
  });

  it("answers 503 when the resolver fails, and 422 for names that are not domains", async () => {
    const team = await setupTeam({ domains: [] });
    const domain = await addDomain(team.key, "example.net");
    resolver({}, 500);
    await expectError(await call("POST", `domains/${domain.id}/verify`, { key: team.key }), 503, {
      error: "The DNS resolver could not be reached; try again later",
    });
    for (const name of ["localhost", "1.2.3.4", "-bad-.com", "a..b", "x".repeat(64) + ".com", "", "exa mple.com"]) {
      const res = await call("POST", "domains", { key: team.key, body: { name } });
      expect({ name, status: res.status }).toEqual({ name, status: 422 });
    }
    await expectError(await call("POST", "domains", { key: team.key, body: { name: "example.net" } }), 422, {
      error: "Validation failed",
      details: { name: ["has already been added"] },
    });
  });

  it("keeps domains per team: another team's id answers 404, each team verifies with its own record", async () => {
    const a = await setupTeam({ domains: [] });
    const b = await setupTeam({ domains: [] });
    const mine = await addDomain(a.key, "shared.example");
    const theirs = await addDomain(b.key, "shared.example");
    expect(theirs.records[0].value).not.toBe(mine.records[0].value);
    for (const [method, path] of [
      ["GET", `domains/${mine.id}`],
      ["DELETE", `domains/${mine.id}`],
      ["POST", `domains/${mine.id}/verify`],
    ]) {
      await expectError(await call(method, path, { key: b.key }), 404, { error: "Domain not found" });
    }
    // Team A's record verifies team A only.
    resolver({ "_edge-platform.shared.example": [mine.records[0].value] });
    expect((await call("POST", `domains/${mine.id}/verify`, { key: a.key })).status).toBe(200);
    expect((await call("POST", `domains/${theirs.id}/verify`, { key: b.key })).status).toBe(422);
    vi.restoreAllMocks();
    expect((await send(a.key, { ...LIVE, from: "a@shared.example" })).status).toBe(201);
    await expectError(await send(b.key, { ...LIVE, from: "b@shared.example" }), 403, NOT_VERIFIED);
    expect((await json(await call("GET", "domains", { key: b.key }))).data.map((d: { id: string }) => d.id)).toEqual([theirs.id]);
    // Deleting takes the right to send away.
    expect((await call("DELETE", `domains/${mine.id}`, { key: a.key })).status).toBe(204);
    await expectError(await send(a.key, { ...LIVE, from: "a@shared.example" }), 403, NOT_VERIFIED);
    await expectError(await call("GET", `domains/${crypto.randomUUID()}`, { key: a.key }), 404, { error: "Domain not found" });
    await expectError(await call("GET", "domains/not-a-uuid", { key: a.key }), 404, { error: "Domain not found" });
  });

  it("the operator verifies a domain for a team directly; scopes: mail:send writes, mail:read lists", async () => {
    const team = await setupTeam({ domains: [] });
    const res = await admin("POST", `teams/${team.teamId}/domains`, { name: "ops.example" });
    expect(res.status).toBe(201);
    expect((await json(res)).data).toMatchObject({ name: "ops.example", status: "verified" });
    expect((await admin("POST", `teams/${crypto.randomUUID()}/domains`, { name: "ops.example" })).status).toBe(404);
    expect((await send(team.key, { ...LIVE, from: "x@ops.example" })).status).toBe(201);
    const reader = await setupTeam({ scopes: ["mail:read"], domains: [] });
    expect((await call("GET", "domains", { key: reader.key })).status).toBe(200);
    await expectError(await call("POST", "domains", { key: reader.key, body: { name: "r.example" } }), 403, { error: "Insufficient scope" });
  });

  it("a batch with one item from an unverified domain is refused whole, naming the item", async () => {
    const team = await setupTeam();
    const res = await sendBatch(team.key, [LIVE, { ...LIVE, from: "x@unverified.example" }]);
    await expectError(res, 403, { error: `Item 2: ${NOT_VERIFIED.error}`, code: "domain_not_verified" });
    expect((await json(await call("GET", "emails", { key: team.key }))).data).toEqual([]);
  });

  it("holds 50 domains per team under parallel adds", async () => {
    const team = await setupTeam({ domains: [] });
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => call("POST", "domains", { key: team.key, body: { name: `d${i}.example` } })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(50);
    expect(results.filter((r) => r.status === 422)).toHaveLength(10);
  });
});
