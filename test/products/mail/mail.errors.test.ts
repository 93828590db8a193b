// Every error of POST /emails and POST /emails/batch: 400, 422, the 12 policy codes, their order,
// batch numbering, 207, and the 429s (rate limit, monthly quota, sandbox caps with a moved clock).
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { getDb } from "../../../src/db/client";
import { addMember } from "../../../src/console/members.service";
import { DEFAULT_SANDBOX_CAPS } from "../../../src/platform/config";
import { checkCaps } from "../../../src/products/mail/mail.service";
import { isAllowedHeader } from "../../../src/products/mail/mail.policy";
import { windowOf } from "../../../src/platform/rate-limit/limiter";
import { admin, call, expectError, json, setupTeam } from "../../helpers/api";
import { setUsed } from "../../helpers/usage";
import { LIVE, SANDBOX, SANDBOX_MAIL, sandboxTeam, send, sendBatch } from "./mail-helpers";

afterEach(() => setClock(null));

async function countEmails(teamId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM emails WHERE team_id = ?").bind(teamId).first<{ n: number }>();
  return row?.n ?? 0;
}

describe("POST /emails: 400", () => {
  it("answers 400 to malformed JSON", async () => {
    const team = await setupTeam();
    const res = await call("POST", "emails", { key: team.key, raw: "{not json", headers: { "content-type": "application/json" } });
    await expectError(res, 400, { error: "Malformed JSON in request body" });
  });

  it("regression (issue 23, finding 8): a JSON body labelled form-encoded, text or nothing answers 400 in mail's shape and sends nothing", async () => {
    const team = await setupTeam();
    const raw = JSON.stringify(LIVE);
    for (const type of ["application/x-www-form-urlencoded", "text/plain;charset=UTF-8", "multipart/form-data; boundary=x", "application/jsonx", null]) {
      const headers: Record<string, string> = type === null ? {} : { "content-type": type };
      for (const path of ["emails", "emails/batch"]) {
        const body = path === "emails" ? raw : JSON.stringify({ emails: [LIVE] });
        await expectError(await call("POST", path, { key: team.key, raw: body, headers }), 400, { error: "Content-Type must be application/json" });
      }
    }
    expect(await countEmails(team.teamId)).toBe(0);
    for (const type of ["application/json; charset=utf-8", "Application/JSON", "application/vnd.api+json"]) {
      expect((await call("POST", "emails", { key: team.key, raw, headers: { "content-type": type } })).status, type).toBe(201);
    }
  });

  it("answers 400 to a JSON body that is not an object", async () => {
    const team = await setupTeam();
    await expectError(await send(team.key, [LIVE]), 400, { error: "Request body must be a JSON object" });
    await expectError(await send(team.key, "text"), 400, { error: "Request body must be a JSON object" });
    await expectError(await send(team.key, null), 400, { error: "Request body must be a JSON object" });
  });

  it("answers 400 naming a missing required field", async () => {
    const team = await setupTeam();
    const { from: _from, ...noFrom } = LIVE;
    await expectError(await send(team.key, noFrom), 400, { error: "Missing required field: from" });
    const { to: _to, subject: _subject, ...noToSubject } = LIVE;
    await expectError(await send(team.key, noToSubject), 400, { error: "Missing required fields: to, subject" });
    await expectError(await send(team.key, { ...LIVE, subject: null }), 400, { error: "Missing required field: subject" });
    expect(await countEmails(team.teamId)).toBe(0);
  });
});

describe("POST /emails: 422 validation", () => {
  it("names each invalid field", async () => {
    const team = await setupTeam();
    const res = await send(team.key, { ...LIVE, from: "not-an-address", to: ["ok@example.com", "bad@"], cc: 5, tags: ["has space"] });
    await expectError(res, 422, {
      error: "Validation failed",
      details: {
        from: ["must be a valid email address"],
        to: ["is not a valid email address: bad@"],
        cc: ["must be an email address or an array of email addresses"],
        tags: ["must be an array of 1-64 character strings of letters, digits, '_' or '-'"],
      },
    });
  });

  it("refuses an empty subject, an empty recipient list, line breaks in headers and a non-object headers", async () => {
    const team = await setupTeam();
    await expectError(await send(team.key, { ...LIVE, subject: " " }), 422, { error: "Validation failed", details: { subject: ["must not be empty"] } });
    await expectError(await send(team.key, { ...LIVE, to: [] }), 422, { error: "Validation failed", details: { to: ["must contain at least one address"] } });
    await expectError(await send(team.key, { ...LIVE, headers: { "X-A": "one\r\nBcc: evil@example.com" } }), 422, {
      error: "Validation failed",
      details: { headers: ["value of X-A must be one line of at most 998 characters"] },
    });
    await expectError(await send(team.key, { ...LIVE, headers: ["X-A"] }), 422, {
      error: "Validation failed",
      details: { headers: ["must be an object of string values"] },
    });
  });
});

describe("POST /emails: sizes", () => {
  it("refuses an oversized html body and an oversized request", async () => {
    const team = await setupTeam();
    await expectError(await send(team.key, { ...LIVE, html: "x".repeat(256 * 1024 + 1) }), 422, {
      error: "Validation failed",
      details: { html: ["must be at most 262144 characters"] },
    });
    await expectError(await sendBatch(team.key, [{ ...LIVE, html: "x".repeat(10 * 1024 * 1024) }]), 422, {
      error: "Validation failed",
      details: { _body: ["must be at most 10 MiB"] },
    });
  });
});

describe("POST /emails: the 12 policy codes", () => {
  it("override_forbidden (403): a per-message key the platform sets", async () => {
    const team = await setupTeam();
    await expectError(await send(team.key, { ...LIVE, status: "delivered" }), 403, {
      error: "The field 'status' is set by the platform and cannot be overridden",
      code: "override_forbidden",
    });
    const res = await send(team.key, { ...LIVE, message_id: "<x@y>" });
    expect(res.status).toBe(403);
    expect((await json(res)).code).toBe("override_forbidden");
  });

  it("forbidden_header (422): a reserved name, any case, or a non-string value", async () => {
    const team = await setupTeam();
    await expectError(await send(team.key, { ...LIVE, headers: { "Reply-To": "x@example.com" } }), 422, {
      error: "The header 'Reply-To' is reserved and cannot be set",
      code: "forbidden_header",
    });
    await expectError(await send(team.key, { ...LIVE, headers: { "X-Edp-Team": "other" } }), 422, {
      error: "The header 'X-Edp-Team' is reserved and cannot be set",
      code: "forbidden_header",
    });
    await expectError(await send(team.key, { ...LIVE, headers: { "X-Count": 5 } }), 422, {
      error: "The header 'X-Count' must have a string value",
      code: "forbidden_header",
    });
    const ok = await send(team.key, { ...LIVE, headers: { "X-Campaign": "spring" } });
    expect(ok.status).toBe(201);
  });

  it("regression: one parser for every address; a string holding several addresses never passes a sandbox allow-list", async () => {
    const team = await sandboxTeam({ allowed_recipients: ["dev@example.com"] });
    const smuggled = `victim@external.test, x <delivered@${SANDBOX}>`;
    await expectError(await send(team.key, { ...SANDBOX_MAIL, to: smuggled }), 422, {
      error: "Validation failed",
      details: { to: [`is not a valid email address: ${smuggled}`] },
    });
    for (const to of ["Smith, John <dev@example.com>", "x <dev@example.com>; y", "Ad<a <dev@example.com>", "grp: dev@example.com;"]) {
      const res = await send(team.key, { ...SANDBOX_MAIL, to });
      expect({ to, status: res.status }).toEqual({ to, status: 422 });
    }
    // A quoted display name with a comma is one mailbox: stored re-quoted, sent as parsed.
    const ok = await send(team.key, { ...SANDBOX_MAIL, to: '"Dev, Team" <DEV@EXAMPLE.COM>' });
    expect(ok.status).toBe(201);
    expect((await json(ok)).data.to).toEqual(['"Dev, Team" <DEV@example.com>']);
  });

  it("forbidden_header: custom headers are an allow-list; trace and authentication headers are refused (regression)", async () => {
    const team = await setupTeam();
    for (const name of [
      "Authentication-Results",
      "Resent-From",
      "Resent-To",
      "Received",
      "ARC-Seal",
      "DKIM-Signature",
      "Return-Path",
      "Sender",
      "X-Edp-Anything",
      "Content-Type",
      "Bcc",
      "X-",
    ]) {
      await expectError(await send(team.key, { ...LIVE, headers: { [name]: "spoof" } }), 422, {
        error: `The header '${name}' is reserved and cannot be set`,
        code: "forbidden_header",
      });
    }
    const ok = await send(team.key, {
      ...LIVE,
      headers: {
        "List-Unsubscribe": "<https://example.com/u>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        "In-Reply-To": "<a@b>",
        References: "<a@b>",
        "X-Campaign": "spring",
      },
    });
    expect(ok.status).toBe(201);
  });

  it("regression (issue 37, 6): provider headers are refused by the token after X-, with or without a dash; other X-* pass", async () => {
    const refused = [
      "X-SMTPAPI-Extra",
      "X-MJ-CustomID",
      "X-Mailjet-TrackOpen",
      "X-Mailin-Tag",
      "X-Sib-Tags",
      "X-Mailgun",
      "X-PM",
      "X-SES",
      "X-MC",
      "X-MSYS",
      "X-MJ",
      "X-Mailjet",
      "X-Mailin",
      "X-Sib",
    ];
    for (const name of refused) expect({ name, allowed: isAllowedHeader(name) }).toEqual({ name, allowed: false });
    for (const name of ["X-PMX", "X-Sessions", "X-Mjolnir", "X-Sibling", "X-Mailing-List", "X-Mcafee", "X-Campaign"]) {
      expect({ name, allowed: isAllowedHeader(name) }).toEqual({ name, allowed: true });
    }
    const team = await setupTeam();
    await expectError(await send(team.key, { ...LIVE, headers: { "X-MJ-Vars": '{"a":1}' } }), 422, {
      error: "The header 'X-MJ-Vars' is reserved and cannot be set",
      code: "forbidden_header",
    });
  });

  it("regression (issue 23, finding 7): provider control headers and unprintable values are forbidden_header; nothing is stored", async () => {
    const team = await setupTeam();
    for (const name of [
      "X-SMTPAPI",
      "x-smtpapi",
      "X-PM-Message-Stream",
      "X-PM-Tag",
      "X-SES-CONFIGURATION-SET",
      "X-Ses-Message-Tags",
      "X-Mailgun-Variables",
      "X-Mailgun-Tag",
      "X-MC-Tags",
      "X-MSYS-API",
    ]) {
      await expectError(await send(team.key, { ...LIVE, headers: { [name]: '{"to":["victim@external.test"]}' } }), 422, {
        error: `The header '${name}' is reserved and cannot be set`,
        code: "forbidden_header",
      });
    }
    for (const value of ["a\u0000b", "a\u2028b", "a\u2029b", "a\u0085b", "a\u0007b", "a\u007fb", "a\u000bb"]) {
      await expectError(await send(team.key, { ...LIVE, headers: { "X-Campaign": value } }), 422, {
        error: "The header 'X-Campaign' must be printable text (no control characters, line or paragraph separators)",
        code: "forbidden_header",
      });
    }
    expect(await countEmails(team.teamId)).toBe(0);
    // Lookalikes that are not provider headers, tabs and non-ASCII text pass.
    const ok = await send(team.key, { ...LIVE, headers: { "X-PMX": "1", "X-Sessions": "2", "X-Campaign": "spring\tété ✓" } });
    expect(ok.status).toBe(201);
  });

  it("headers taken together are capped at 16 KB of JSON (422 on headers)", async () => {
    const team = await setupTeam();
    const headers = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`X-H${i}`, "é".repeat(450)]));
    await expectError(await send(team.key, { ...LIVE, headers }), 422, { error: "Validation failed", details: { headers: ["must be at most 16 KB of JSON"] } });
    expect(await countEmails(team.teamId)).toBe(0);
  });

  it("invalid_stream (422)", async () => {
    const team = await setupTeam();
    await expectError(await send(team.key, { ...LIVE, stream: "marketing" }), 422, {
      error: "stream must be either 'transactional' or 'broadcast'",
      code: "invalid_stream",
    });
    expect((await json(await send(team.key, { ...LIVE, stream: 1 }))).code).toBe("invalid_stream");
  });

  it("stream_required (422) when the key allows both streams; the single stream is the default otherwise", async () => {
    const team = await setupTeam();
    const { stream: _s, ...noStream } = LIVE;
    await expectError(await send(team.key, noStream), 422, {
      error: "This key allows several streams (transactional, broadcast); set 'stream'",
      code: "stream_required",
    });
    const single = await setupTeam({ mail: { allowed_streams: ["broadcast"] } });
    const res = await send(single.key, noStream);
    expect(res.status).toBe(201);
    expect((await json(res)).data.stream).toBe("broadcast");
  });

  it("stream_not_allowed (403)", async () => {
    const team = await setupTeam({ mail: { allowed_streams: ["transactional"] } });
    await expectError(await send(team.key, { ...LIVE, stream: "broadcast" }), 403, {
      error: "This key may not send on the 'broadcast' stream",
      code: "stream_not_allowed",
    });
  });

  it("sandbox_disabled (403) while suspended; the operator API lifts it", async () => {
    const team = await sandboxTeam();
    expect((await admin("PATCH", `keys/${team.keyId}`, { mail: { suspended: true } })).status).toBe(200);
    await expectError(await send(team.key, SANDBOX_MAIL), 403, {
      error: "This key is suspended from sending because of its bounce or complaint rate",
      code: "sandbox_disabled",
    });
    expect((await admin("PATCH", `keys/${team.keyId}`, { mail: { suspended: false } })).status).toBe(200);
    expect((await send(team.key, SANDBOX_MAIL)).status).toBe(201);
  });

  it("sandbox_domain_forbidden (403): a live key sending from the sandbox domain", async () => {
    const team = await setupTeam();
    await expectError(await send(team.key, { ...LIVE, from: `Test <test@${SANDBOX.toUpperCase()}>` }), 403, {
      error: `Live keys cannot send from the sandbox domain ${SANDBOX}`,
      code: "sandbox_domain_forbidden",
    });
  });

  it("sandbox_stream_forbidden (403): a sandbox key on broadcast", async () => {
    const team = await sandboxTeam({ allowed_streams: ["transactional", "broadcast"] });
    await expectError(await send(team.key, { ...SANDBOX_MAIL, stream: "broadcast" }), 403, {
      error: "Sandbox keys can only send on the 'transactional' stream",
      code: "sandbox_stream_forbidden",
    });
  });

  it("a sandbox key must send from the sandbox domain (422 on from)", async () => {
    const team = await sandboxTeam();
    await expectError(await send(team.key, { ...SANDBOX_MAIL, from: "hello@acme.dev" }), 422, {
      error: "Validation failed",
      details: { from: [`sandbox keys must send from the ${SANDBOX} domain`] },
    });
  });

  it("sandbox_extra_recipients (422): cc, bcc or reply_to", async () => {
    const team = await sandboxTeam();
    for (const extra of [{ cc: "qa@example.com" }, { bcc: ["qa@example.com"] }, { reply_to: "qa@example.com" }]) {
      await expectError(await send(team.key, { ...SANDBOX_MAIL, ...extra }), 422, {
        error: "Sandbox sends cannot include cc, bcc or reply_to",
        code: "sandbox_extra_recipients",
      });
    }
  });

  it("recipient_not_allowed (422): outside the allow-list; allow-listed and simulator addresses pass", async () => {
    const team = await sandboxTeam();
    await expectError(await send(team.key, { ...SANDBOX_MAIL, to: ["dev@example.com", "Stranger <Someone@Example.com>"] }), 422, {
      error: "The recipient someone@example.com is not in this sandbox key's allow-list",
      code: "recipient_not_allowed",
    });
    expect((await send(team.key, { ...SANDBOX_MAIL, to: ["DEV@example.com", `bounced@${SANDBOX}`] })).status).toBe(201);
  });

  it("regression: sandbox caps are reserved, so 12 parallel sends against an hourly cap of 5 store exactly 5", async () => {
    const team = await sandboxTeam({ hourly_cap: 5, daily_cap: 100 });
    const results = await Promise.all(Array.from({ length: 12 }, () => send(team.key, SANDBOX_MAIL)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429)).toHaveLength(7);
    expect(await countEmails(team.teamId)).toBe(5);
  });

  it("a send refused by the monthly quota after its caps were reserved gives the reservation back", async () => {
    const team = await sandboxTeam({ hourly_cap: 1 });
    await setUsed(team.teamId, "mail", 250000);
    expect((await send(team.key, SANDBOX_MAIL)).status).toBe(429);
    await setUsed(team.teamId, "mail", 0);
    expect((await send(team.key, SANDBOX_MAIL)).status).toBe(201);
  });

  it("hourly_cap_exceeded and daily_cap_exceeded (429) counted per key in the UTC hour and day, with a moved clock", async () => {
    const team = await sandboxTeam({ hourly_cap: 2, daily_cap: 3 });
    const day = Date.UTC(2026, 10, 3);
    setClock(day + 10 * 3600_000 + 10 * 60_000); // 10:10
    expect((await send(team.key, SANDBOX_MAIL)).status).toBe(201);
    expect((await send(team.key, SANDBOX_MAIL)).status).toBe(201);
    const hourly = await send(team.key, SANDBOX_MAIL);
    expect(hourly.headers.get("retry-after")).toBe(String(50 * 60));
    await expectError(hourly, 429, { error: "Sandbox hourly cap of 2 emails reached", code: "hourly_cap_exceeded" });

    setClock(day + 11 * 3600_000 + 5 * 60_000); // 11:05, a new hour
    expect((await send(team.key, SANDBOX_MAIL)).status).toBe(201);
    const daily = await send(team.key, SANDBOX_MAIL);
    expect(daily.headers.get("retry-after")).toBe(String(13 * 3600 - 5 * 60));
    await expectError(daily, 429, { error: "Sandbox daily cap of 3 emails reached", code: "daily_cap_exceeded" });

    setClock(day + 86_400_000 + 60_000); // the next day, 00:01
    expect((await send(team.key, SANDBOX_MAIL)).status).toBe(201);
    expect(await countEmails(team.teamId)).toBe(4);
  });

  it("a cap on a live key answers 422 (operator create and PATCH): live keys honour no caps (issue 37, 3)", async () => {
    const team = await setupTeam();
    for (const mail of [{ hourly_cap: 1 }, { daily_cap: 5 }, { sandbox: false, hourly_cap: 1 }]) {
      await expectError(await admin("POST", `teams/${team.teamId}/keys`, { scopes: ["mail:send"], mail }), 422, {
        error: "Validation failed",
        details: { [Object.keys(mail).find((k) => k.endsWith("_cap"))!]: ["only sandbox keys have caps; a live key sends under the team's plan"] },
      });
    }
    expect((await admin("PATCH", `keys/${team.keyId}`, { mail: { hourly_cap: 3 } })).status).toBe(422);
    const sandbox = await sandboxTeam();
    expect((await admin("PATCH", `keys/${sandbox.keyId}`, { mail: { hourly_cap: 3 } })).status).toBe(200);
    // Turning a capped sandbox key live keeps no caps it would ignore.
    expect((await admin("PATCH", `keys/${sandbox.keyId}`, { mail: { sandbox: false } })).status).toBe(422);
    expect((await admin("PATCH", `keys/${sandbox.keyId}`, { mail: { sandbox: false, hourly_cap: null, daily_cap: null } })).status).toBe(200);
  });
});

describe("sandbox mail (regressions, issue 37 findings 2 and 3)", () => {
  it("the team's sandbox caps bind every sandbox key of the team, counted per team: minted keys do not multiply them", async () => {
    const team = await sandboxTeam({ hourly_cap: 100 });
    const other = await admin("POST", `teams/${team.teamId}/keys`, { scopes: ["mail:send"], mail: { sandbox: true } });
    const second = (await json(other)).data;
    const small = { ...env, SANDBOX_HOURLY_CAP: "3", SANDBOX_DAILY_CAP: "10" } as typeof env;
    const policy = { sandbox: true, allowed_streams: ["transactional"], allowed_recipients: [], hourly_cap: 100, daily_cap: null, suspended: false };
    await checkCaps(small, team.teamId, team.keyId, policy, 2);
    await expect(checkCaps(small, team.teamId, second.id, { ...policy, hourly_cap: null }, 2)).rejects.toMatchObject({
      error: { code: "hourly_cap_exceeded", message: "Sandbox hourly cap of 3 emails reached" },
    });
    await checkCaps(small, team.teamId, second.id, { ...policy, hourly_cap: null }, 1);
    // The key's own cap binds when it is the smaller one.
    const own = await sandboxTeam({ hourly_cap: 1 });
    await checkCaps(small, own.teamId, own.keyId, { ...policy, hourly_cap: 1 }, 1);
    await expect(checkCaps(small, own.teamId, own.keyId, { ...policy, hourly_cap: 1 }, 1)).rejects.toMatchObject({ error: { code: "hourly_cap_exceeded" } });
  });

  it(`a sandbox key without caps of its own is held to the team's default hourly cap (${DEFAULT_SANDBOX_CAPS.hourly})`, async () => {
    const team = await sandboxTeam();
    const batch = Array.from({ length: DEFAULT_SANDBOX_CAPS.hourly + 1 }, () => ({ ...SANDBOX_MAIL, to: `delivered@${SANDBOX}` }));
    const res = await sendBatch(team.key, batch);
    expect(res.status).toBe(429);
    expect((await json(res)).code).toBe("hourly_cap_exceeded");
    expect(await countEmails(team.teamId)).toBe(0);
  });

  it("sandbox mail reaches only accepted members of the team (the simulator always): an allow-listed stranger or a pending invitee is refused", async () => {
    const stranger = `victim-${crypto.randomUUID().slice(0, 8)}@gmail.test`;
    const team = await sandboxTeam({ allowed_recipients: [stranger] });
    await expectError(await send(team.key, { ...SANDBOX_MAIL, to: stranger, html: '<a href="https://evil.test">Verify</a>' }), 422, {
      error: `The recipient ${stranger} is not an accepted member of this team (sandbox mail goes only to the team's members)`,
      code: "recipient_not_allowed",
    });
    await env.DB.prepare(
      "INSERT INTO console_links (id, token_hash, kind, email, team_id, role, created_at, expires_at) VALUES (?, ?, 'invite', ?, ?, 'viewer', ?, ?)",
    )
      .bind(crypto.randomUUID(), crypto.randomUUID(), stranger, team.teamId, new Date().toISOString(), new Date(Date.now() + 86_400_000).toISOString())
      .run();
    expect((await send(team.key, { ...SANDBOX_MAIL, to: stranger })).status).toBe(422);
    const batch = await sendBatch(team.key, [
      { ...SANDBOX_MAIL, to: `delivered@${SANDBOX}` },
      { ...SANDBOX_MAIL, to: stranger },
    ]);
    expect((await json(batch)).error).toMatch(/^Item 2: The recipient/);
    await addMember(getDb(env.DB), team.teamId, { email: stranger, role: "viewer" });
    expect((await send(team.key, { ...SANDBOX_MAIL, to: stranger })).status).toBe(201);
    expect((await send(team.key, { ...SANDBOX_MAIL, to: `delivered@${SANDBOX}` })).status).toBe(201);
  });
});

describe("POST /emails: rule order", () => {
  it("validation comes before every policy rule", async () => {
    const team = await setupTeam();
    const res = await send(team.key, { ...LIVE, to: "bad", status: "sent", stream: "x" });
    expect(res.status).toBe(422);
    expect(await json(res)).toEqual({ error: "Validation failed", details: { to: ["is not a valid email address: bad"] } });
  });

  it("peels off one rule at a time in the documented order (live key)", async () => {
    const team = await setupTeam({ mail: { allowed_streams: ["transactional"] } });
    const all = { ...LIVE, from: `x@${SANDBOX}`, status: "sent", headers: { Subject: "x" }, stream: "nope" };
    const codes: string[] = [];
    const steps = [
      (b: Record<string, unknown>) => {
        delete b.status;
      },
      (b: Record<string, unknown>) => {
        delete b.headers;
      },
      (b: Record<string, unknown>) => {
        b.stream = "broadcast";
      },
      (b: Record<string, unknown>) => {
        b.stream = "transactional";
      },
      (b: Record<string, unknown>) => {
        b.from = LIVE.from;
      },
    ];
    const body: Record<string, unknown> = { ...all };
    for (const step of steps) {
      codes.push((await json(await send(team.key, body))).code);
      step(body);
    }
    expect(codes).toEqual(["override_forbidden", "forbidden_header", "invalid_stream", "stream_not_allowed", "sandbox_domain_forbidden"]);
    expect((await send(team.key, body)).status).toBe(201);
  });

  it("peels off one rule at a time in the documented order (sandbox key)", async () => {
    const team = await sandboxTeam({ allowed_streams: ["transactional", "broadcast"], hourly_cap: 1 });
    await send(team.key, { ...SANDBOX_MAIL, stream: "transactional" }); // uses the hourly cap
    await admin("PATCH", `keys/${team.keyId}`, { mail: { suspended: true } });
    const body: Record<string, unknown> = { ...SANDBOX_MAIL, to: "other@example.com", cc: "qa@example.com" };
    const codes: string[] = [];
    codes.push((await json(await send(team.key, body))).code); // stream omitted, two allowed
    body.stream = "broadcast";
    codes.push((await json(await send(team.key, body))).code);
    await admin("PATCH", `keys/${team.keyId}`, { mail: { suspended: false } });
    codes.push((await json(await send(team.key, body))).code);
    body.stream = "transactional";
    codes.push((await json(await send(team.key, body))).code);
    delete body.cc;
    codes.push((await json(await send(team.key, body))).code);
    body.to = "dev@example.com";
    codes.push((await json(await send(team.key, body))).code);
    expect(codes).toEqual([
      "stream_required",
      "sandbox_disabled",
      "sandbox_stream_forbidden",
      "sandbox_extra_recipients",
      "recipient_not_allowed",
      "hourly_cap_exceeded",
    ]);
  });

  it("hourly cap is judged before the daily cap", async () => {
    const team = await sandboxTeam({ hourly_cap: 1, daily_cap: 1 });
    expect((await send(team.key, SANDBOX_MAIL)).status).toBe(201);
    expect((await json(await send(team.key, SANDBOX_MAIL))).code).toBe("hourly_cap_exceeded");
  });
});

describe("POST /emails/batch", () => {
  it("answers 400 when emails is missing or not an array, and to malformed JSON", async () => {
    const team = await setupTeam();
    await expectError(await call("POST", "emails/batch", { key: team.key, body: {} }), 400, { error: "Missing required field: emails" });
    await expectError(await call("POST", "emails/batch", { key: team.key, body: { emails: LIVE } }), 400, { error: "emails must be an array" });
    await expectError(await call("POST", "emails/batch", { key: team.key, raw: "[", headers: { "content-type": "application/json" } }), 400, {
      error: "Malformed JSON in request body",
    });
  });

  it("answers 422 naming the 0-indexed position of an item missing a required field; nothing stored", async () => {
    const team = await setupTeam();
    const { to: _to, ...noTo } = LIVE;
    await expectError(await sendBatch(team.key, [LIVE, noTo, LIVE]), 422, { error: "Item at index 1: Missing required field: to" });
    await expectError(await sendBatch(team.key, [LIVE, LIVE, "x"]), 422, { error: "Item at index 2: Missing required fields: from, to, subject" });
    await expectError(await sendBatch(team.key, []), 422, { error: "Validation failed", details: { emails: ["must contain between 1 and 100 emails"] } });
    expect(await countEmails(team.teamId)).toBe(0);
  });

  it("answers the policy error of the first failing item, prefixed with its 1-indexed number; nothing stored", async () => {
    const team = await setupTeam();
    await expectError(await sendBatch(team.key, [LIVE, { ...LIVE, stream: "nope" }, { ...LIVE, status: "x" }]), 422, {
      error: "Item 2: stream must be either 'transactional' or 'broadcast'",
      code: "invalid_stream",
    });
    await expectError(await sendBatch(team.key, [{ ...LIVE, id: "mine" }]), 403, {
      error: "Item 1: The field 'id' is set by the platform and cannot be overridden",
      code: "override_forbidden",
    });
    expect(await countEmails(team.teamId)).toBe(0);
  });

  it("answers 207 when only some items fail validation: created ones and {status: 422, errors}", async () => {
    const team = await setupTeam();
    const res = await sendBatch(team.key, [LIVE, { ...LIVE, to: "nope" }, { ...LIVE, subject: "Third" }]);
    expect(res.status).toBe(207);
    const { data } = await json(res);
    expect(data).toHaveLength(3);
    expect(data[0]).toMatchObject({ subject: "Hello", status: "queued" });
    expect(data[1]).toEqual({ status: 422, errors: { to: ["is not a valid email address: nope"] } });
    expect(data[2]).toMatchObject({ subject: "Third", status: "queued" });
    expect(await countEmails(team.teamId)).toBe(2);
    const usage = await json(await call("GET", "usage", { key: team.key }));
    expect(usage.data.services.mail.used).toBe(2);
  });

  it("answers 422 with indexed details when every item fails validation", async () => {
    const team = await setupTeam();
    await expectError(
      await sendBatch(team.key, [
        { ...LIVE, to: "a" },
        { ...LIVE, from: "b" },
      ]),
      422,
      {
        error: "Validation failed",
        details: { "emails.0.to": ["is not a valid email address: a"], "emails.1.from": ["must be a valid email address"] },
      },
    );
  });

  it("sets aside a sandbox item sending from another domain like any invalid item (207)", async () => {
    const team = await sandboxTeam();
    const res = await sendBatch(team.key, [SANDBOX_MAIL, { ...SANDBOX_MAIL, from: "a@acme.dev" }]);
    expect(res.status).toBe(207);
    const { data } = await json(res);
    expect(data[0].status).toBe("queued");
    expect(data[1]).toEqual({ status: 422, errors: { from: [`sandbox keys must send from the ${SANDBOX} domain`] } });
  });

  it("refuses a batch passing the sandbox cap, naming the first item over it", async () => {
    const team = await sandboxTeam({ hourly_cap: 3 });
    expect((await send(team.key, SANDBOX_MAIL)).status).toBe(201);
    await expectError(await sendBatch(team.key, [SANDBOX_MAIL, { ...SANDBOX_MAIL, to: "x" }, SANDBOX_MAIL, SANDBOX_MAIL]), 429, {
      error: "Item 4: Sandbox hourly cap of 3 emails reached",
      code: "hourly_cap_exceeded",
    });
    expect(await countEmails(team.teamId)).toBe(1);
  });
});

describe("429", () => {
  it("monthly mail quota: one unit per email, nothing stored when refused", async () => {
    const team = await setupTeam({ plan: "free" });
    await setUsed(team.teamId, "mail", 2999);
    await expectError(await sendBatch(team.key, [LIVE, LIVE]), 429, { error: "Monthly usage limit exceeded. Upgrade your plan." });
    expect(await countEmails(team.teamId)).toBe(0);
    expect((await send(team.key, LIVE)).status).toBe(201);
    await expectError(await send(team.key, LIVE), 429, { error: "Monthly usage limit exceeded. Upgrade your plan." });
  });

  it("rate limit: a batch is one request against the team's default bucket", async () => {
    const team = await setupTeam({ plan: "free" });
    const at = Date.UTC(2026, 10, 4, 9, 0, 10);
    setClock(at);
    const { start } = windowOf(at);
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`default:team:${team.teamId}`));
    await stub.hit(start, 598);
    const res = await sendBatch(team.key, [LIVE, LIVE, LIVE]);
    expect(res.status).toBe(201);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("1");
    expect((await send(team.key, LIVE)).status).toBe(201);
    const limited = await sendBatch(team.key, [LIVE]);
    expect(limited.headers.get("retry-after")).toBe("50");
    await expectError(limited, 429, { error: "Rate limit exceeded", retry_after: 50 });
  });
});
