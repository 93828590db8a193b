// The zod validator of one email and its hook (mail.validation.ts), for what the route tests do not
// pin one by one: null stands for absent, several messages of one field in order, the first broken
// rule of a single-message field, the normalised input. Through the API: a single send's missing
// field answers 400, a batch item's 422 with its 0-indexed position.
import { describe, expect, it } from "vitest";
import { checkEmail } from "../../../src/products/mail/mail.validation";
import { expectError, setupTeam } from "../../helpers/api";
import { LIVE, send, sendBatch } from "./mail-helpers";

const base = { from: "Acme <hello@acme.dev>", to: "user@example.com", subject: "Hi" };

describe("checkEmail", () => {
  it("answers the missing required fields of a non-object or of a body with absent or null ones", () => {
    expect(checkEmail("x")).toEqual({ missing: ["from", "to", "subject"] });
    expect(checkEmail([base])).toEqual({ missing: ["from", "to", "subject"] });
    expect(checkEmail({ ...base, to: null, subject: undefined })).toEqual({ missing: ["to", "subject"] });
  });

  it("lists every message of a field in order, and one message where the first broken rule wins", () => {
    const to = Array.from({ length: 51 }, (_, i) => (i === 3 ? "not an address" : `u${i}@example.com`));
    expect(
      checkEmail({
        ...base,
        to,
        subject: " ",
        tags: ["ok", "bad tag", ...Array.from({ length: 12 }, (_, i) => `t${i}`)],
        html: 5,
        headers: { "bad name": "x", "X-A": "a\nb" },
      }),
    ).toEqual({
      errors: {
        to: ["must contain at most 50 addresses", "is not a valid email address: not an address"],
        subject: ["must not be empty"],
        html: ["must be a string"],
        headers: ["has an invalid header name: bad name", "value of X-A must be one line of at most 998 characters"],
        tags: ["must be an array of 1-64 character strings of letters, digits, '_' or '-'"],
      },
    });
    expect(checkEmail({ ...base, to: [], cc: ["a@example.com", 7], subject: "a\nb", tags: Array.from({ length: 11 }, (_, i) => `t${i}`) })).toEqual({
      errors: {
        to: ["must contain at least one address"],
        cc: ["must be an email address or an array of email addresses"],
        subject: ["must not contain line breaks"],
        tags: ["must have at most 10 entries"],
      },
    });
    expect(checkEmail({ ...base, from: 42, headers: [] })).toEqual({ errors: { from: ["must be a string"], headers: ["must be an object of string values"] } });
  });

  it("normalises a valid email: canonical addresses, null optional fields absent, tags without repeats, other header values and the stream passed on", () => {
    expect(checkEmail({ ...base, to: ["Ada <ADA@Example.COM>"], cc: null, html: null, tags: ["a", "a", "b"], headers: { "X-N": 1 }, stream: "nope" })).toEqual({
      email: {
        from: '"Acme" <hello@acme.dev>',
        fromAddress: "hello@acme.dev",
        to: ['"Ada" <ADA@example.com>'],
        cc: [],
        bcc: [],
        replyTo: [],
        subject: "Hi",
        html: null,
        text: null,
        headers: { "X-N": 1 },
        tags: ["a", "b"],
        stream: "nope",
      },
    });
  });
});

describe("the hook's answers through the API", () => {
  it("a single send missing fields answers 400; a batch item missing them 422 with its 0-indexed position", async () => {
    const team = await setupTeam();
    await expectError(await send(team.key, { ...LIVE, to: null, subject: undefined }), 400, { error: "Missing required fields: to, subject" });
    await expectError(await sendBatch(team.key, [LIVE, LIVE, { from: LIVE.from, to: LIVE.to }]), 422, {
      error: "Item at index 2: Missing required field: subject",
    });
    await expectError(await sendBatch(team.key, [LIVE, "x"]), 422, { error: "Item at index 1: Missing required fields: from, to, subject" });
  });
});
