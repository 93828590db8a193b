// The public endpoint POST /f/:form_id: the three encodings, the JSON and browser answers, the
// redirect rule, the `_` fields, the honeypot, the Origin rule and CORS, the error codes, the
// quota. Every refusal stores nothing and spends no unit.
import { describe, expect, it } from "vitest";
import { call, json, setupTeam } from "../../helpers/api";
import { setUsed, usedOf } from "../../helpers/usage";
import { createForm, post, postJson, postUrlencoded, storeSql, submissions } from "./forms.helpers";

const FIELDS = [
  { name: "email", type: "email", required: true },
  { name: "age", type: "number" },
  { name: "site", type: "url" },
  { name: "message", type: "text", max_length: 10 },
  { name: "agree", type: "checkbox", required: true },
];

async function stored(formId: string): Promise<number> {
  return (await storeSql<{ n: number }>(formId, "SELECT count(*) AS n FROM submissions"))[0]?.n ?? 0;
}

describe("POST /f/:form_id", () => {
  it("takes a browser urlencoded post: 303 to the hosted thank-you page, fields stored, `_` fields not, repeated names as a list", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key);
    const res = await postUrlencoded(form.id, { name: "Ada", topic: ["a", "b"], _subject: "Hi", _replyto: "ada@example.com", _other: "dropped" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`http://app.test/f/${form.id}/thanks`);
    const [s] = await submissions(key, form.id);
    expect(s.fields).toEqual({ name: "Ada", topic: ["a", "b"] });
    expect(s).toMatchObject({ subject: "Hi", reply_to: "ada@example.com" });
    const page = await call("GET", res.headers.get("location")!);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Thank you");
    expect(html).not.toContain("<script");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
  });

  it("answers JSON to a JSON body and to Accept: application/json", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key);
    const a = await postJson(form.id, { email: "a@example.com", n: 3, ok: true, tags: ["x", 1] });
    expect(a.status).toBe(200);
    const body = await json(a);
    expect(body).toEqual({ ok: true, id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const b = await postUrlencoded(form.id, { email: "b@example.com" }, { headers: { accept: "application/json" } });
    expect(b.status).toBe(200);
    const list = await submissions(key, form.id);
    expect(list.map((s) => s.fields)).toEqual([{ email: "b@example.com" }, { email: "a@example.com", n: "3", ok: "true", tags: ["x", "1"] }]);
  });

  it("sends a browser to _next only on the redirect URL's origin or an allowed origin, else to redirect_url", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key, { redirect_url: "https://site.example/thanks", allowed_origins: ["https://other.example"] });
    const to = async (next: string) => (await postUrlencoded(form.id, { a: "b", _next: next })).headers.get("location");
    expect(await to("https://site.example/done?x=1")).toBe("https://site.example/done?x=1");
    expect(await to("https://other.example/ok")).toBe("https://other.example/ok");
    expect(await to("https://evil.example/phish")).toBe("https://site.example/thanks");
    expect(await to("//evil.example/x")).toBe("https://site.example/thanks");
    expect(await to("javascript:alert(1)")).toBe("https://site.example/thanks");
    expect(await to("https://user:pw@site.example/x")).toBe("https://site.example/thanks");
    const bare = await createForm(key);
    expect((await postUrlencoded(bare.id, { a: "b", _next: "https://anywhere.example/" })).headers.get("location")).toBe(`http://app.test/f/${bare.id}/thanks`);
  });

  it("answers every field error code in JSON (422), storing nothing and spending no unit", async () => {
    const { key, teamId } = await setupTeam();
    const form = await createForm(key, { fields: FIELDS });
    const res = await postJson(form.id, { email: "not-an-email", age: "old", site: "ftp://x", message: "far too long text" });
    expect(res.status).toBe(422);
    const body = await json(res);
    expect(body.ok).toBe(false);
    expect(body.errors.map((e: { field: string; code: string }) => [e.field, e.code])).toEqual([
      ["email", "TYPE_EMAIL"],
      ["age", "TYPE_NUMBER"],
      ["site", "TYPE_URL"],
      ["message", "TOO_LONG"],
      ["agree", "REQUIRED_FIELD_MISSING"],
    ]);
    for (const e of body.errors) expect(typeof e.message).toBe("string");
    const many: Record<string, string> = {};
    for (let i = 0; i < 51; i++) many[`f${i}`] = "x";
    const bare = await createForm(key);
    const tooMany = await postJson(bare.id, many);
    expect(tooMany.status).toBe(422);
    expect((await json(tooMany)).errors[0]).toMatchObject({ field: null, code: "TOO_MANY_FIELDS" });
    expect(await stored(form.id)).toBe(0);
    expect(await stored(bare.id)).toBe(0);
    // Its unit was taken with the caps before the body was read, and given back: none spent.
    expect((await usedOf(teamId, "forms")) ?? 0).toBe(0);
  });

  it("keeps declared fields only, and takes a valid post", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key, { fields: FIELDS });
    const res = await postJson(form.id, { email: "a@example.com", age: "42", agree: "on", stray: "dropped" });
    expect(res.status).toBe(200);
    expect((await submissions(key, form.id))[0].fields).toEqual({ email: "a@example.com", age: "42", agree: "on" });
  });

  it("answers a refused browser post with a 422 HTML page saying what to fix", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key, { fields: FIELDS });
    const res = await postUrlencoded(form.id, { email: "<script>alert(1)</script>" });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain("email must be an email address");
    expect(html).toContain('data-code="REQUIRED_FIELD_MISSING"');
    expect(html).not.toContain("<script>");
  });

  it("answers a filled honeypot exactly as a success, keeps it as spam, spends no unit", async () => {
    const { key, teamId } = await setupTeam();
    const form = await createForm(key, { fields: FIELDS, notify_emails: ["owner@example.com"], webhook_url: "https://hooks.example.com/f" });
    const res = await postJson(form.id, { email: "bad", _gotcha: "i am a bot" }, { settled: true });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ ok: true, id: expect.any(String) });
    const browser = await postUrlencoded(form.id, { _gotcha: "x" });
    expect(browser.status).toBe(303);
    expect(await submissions(key, form.id, "inbox")).toHaveLength(0);
    expect(await submissions(key, form.id, "spam")).toHaveLength(2);
    // Its unit was taken with the caps before the body was read, and given back: none spent.
    expect((await usedOf(teamId, "forms")) ?? 0).toBe(0);
    expect(await storeSql(form.id, "SELECT * FROM deliveries")).toHaveLength(0);
    const mails = await call("GET", "/api/v1/usage", { key });
    expect((await json(mails)).data.services.mail.used).toBe(0);
  });

  it("refuses a browser Origin outside a non-empty allowed_origins (null too) with 403 ORIGIN_NOT_ALLOWED; no Origin is allowed", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key, { allowed_origins: ["https://site.example"] });
    for (const origin of ["https://evil.example", "null", "https://site.example.evil.example"]) {
      const res = await postJson(form.id, { a: "b" }, { headers: { origin } });
      expect(res.status, origin).toBe(403);
      expect(await json(res)).toEqual({ ok: false, error: expect.any(String), code: "ORIGIN_NOT_ALLOWED" });
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    }
    expect((await postJson(form.id, { a: "b" })).status).toBe(200);
    const ok = await postJson(form.id, { a: "b" }, { headers: { origin: "https://site.example" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://site.example");
    expect(await stored(form.id)).toBe(2);
  });

  it("answers CORS for JSON posts: preflight for admitted origins only, any origin when the list is empty", async () => {
    const { key } = await setupTeam();
    const open = await createForm(key);
    const closed = await createForm(key, { allowed_origins: ["https://site.example"] });
    const preflight = (id: string, origin: string) =>
      call("OPTIONS", `/f/${id}`, { headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type" } });
    const a = await preflight(open.id, "https://anyone.example");
    expect(a.status).toBe(204);
    expect(a.headers.get("access-control-allow-origin")).toBe("https://anyone.example");
    expect(a.headers.get("access-control-allow-headers")).toContain("Content-Type");
    const b = await preflight(closed.id, "https://evil.example");
    expect(b.headers.get("access-control-allow-origin")).toBeNull();
    const c = await postJson(open.id, { a: 1 }, { headers: { origin: "https://anyone.example" } });
    expect(c.headers.get("access-control-allow-origin")).toBe("https://anyone.example");
    const refused = await postJson(closed.id, [1], { headers: { origin: "https://site.example" } });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("access-control-allow-origin")).toBe("https://site.example");
  });

  it("answers 404 for an unknown, malformed or disabled form", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key, { enabled: false });
    for (const id of [form.id, crypto.randomUUID(), "not-a-uuid"]) {
      const res = await postJson(id, { a: "b" });
      expect(res.status).toBe(404);
      expect(await json(res)).toEqual({ ok: false, error: "Form not found", code: "FORM_NOT_FOUND" });
    }
    const browser = await postUrlencoded(crypto.randomUUID(), { a: "b" });
    expect(browser.status).toBe(404);
    expect(browser.headers.get("content-type")).toContain("text/html");
    expect((await call("GET", `/f/${crypto.randomUUID()}/thanks`)).status).toBe(404);
  });

  it("refuses bodies it cannot take: 413 over 1 MB, 415 other types, 400 a JSON array or nested object or bad JSON", async () => {
    const { key, teamId } = await setupTeam();
    const form = await createForm(key);
    const big = await post(form.id, `a=${"x".repeat(1024 * 1024)}`, "application/x-www-form-urlencoded", { headers: { accept: "application/json" } });
    expect(big.status).toBe(413);
    expect(await json(big)).toMatchObject({ ok: false, code: "PAYLOAD_TOO_LARGE" });
    const bigJson = await postJson(form.id, { a: "x".repeat(1024 * 1024) });
    expect(bigJson.status).toBe(413);
    const text = await post(form.id, "hello", "text/plain", { headers: { accept: "application/json" } });
    expect(text.status).toBe(415);
    expect(await json(text)).toMatchObject({ ok: false, code: "UNSUPPORTED_MEDIA_TYPE" });
    for (const body of ["[1,2]", '{"a":{"b":1}}', "{not json", '"text"']) {
      const res = await post(form.id, body, "application/json");
      expect(res.status, body).toBe(400);
      expect(await json(res)).toMatchObject({ ok: false, code: "MALFORMED_BODY" });
    }
    expect(await stored(form.id)).toBe(0);
    // Its unit was taken with the caps before the body was read, and given back: none spent.
    expect((await usedOf(teamId, "forms")) ?? 0).toBe(0);
  });

  it("spends one submissions unit per accepted post and refuses with the monthly-quota 429 when none is left, storing nothing", async () => {
    const { key, teamId } = await setupTeam({ plan: "free" });
    const form = await createForm(key);
    expect((await postJson(form.id, { a: "1" })).status).toBe(200);
    expect(await usedOf(teamId, "forms")).toBe(1);
    await setUsed(teamId, "forms", 1000);
    const res = await postJson(form.id, { a: "2" });
    expect(res.status).toBe(429);
    expect(await json(res)).toEqual({ error: "Monthly usage limit exceeded. Upgrade your plan." });
    const browser = await postUrlencoded(form.id, { a: "3" });
    expect(browser.status).toBe(429);
    expect(await stored(form.id)).toBe(1);
    // At the limit every post is refused before its body is read, the honeypot's too: a bot cannot
    // tell its post from a person's, and nothing more is stored.
    expect((await postJson(form.id, { _gotcha: "bot" })).status).toBe(429);
    expect(await stored(form.id)).toBe(1);
    // A unit given back (the month's total lowered) lets the next post in.
    await setUsed(teamId, "forms", 999);
    expect((await postJson(form.id, { a: "4" })).status).toBe(200);
    expect(await usedOf(teamId, "forms")).toBe(1000);
  });
});
