// The send endpoints read their bodies themselves (400 for malformed JSON and missing required
// fields, 422 for bad fields, the capped 10 MiB reader) and validate them with EmailFields through
// its hook (checkEmail); the document's SendEmail is built from EmailFields with `headers` and
// `stream` as a caller should send them. This holds the two together: the same required fields,
// and every field the document declares accepted by the validator with a value the schema accepts.
import { describe, expect, it } from "vitest";
import { REQUIRED_FIELDS } from "../../../src/products/mail/mail.policy";
import { checkEmail } from "../../../src/products/mail/mail.validation";
import { SendBatchBody, SendEmailBody } from "../../../src/products/mail/mail.schemas";

const base = { from: "Acme <hello@acme.dev>", to: "user@example.com", subject: "Welcome" };
/** A valid value of every optional field of the document's schema. */
const samples: Record<string, unknown> = {
  html: "<p>Hi</p>",
  text: "Hi",
  cc: ["c@example.com"],
  bcc: "d@example.com",
  reply_to: ["e@example.com"],
  headers: { "x-campaign": "autumn" },
  stream: "transactional",
  tags: ["welcome"],
};

describe("the document's SendEmail body and the validator", () => {
  const shape = SendEmailBody.shape as Record<string, { safeParse: (value: unknown) => { success: boolean } }>;

  it("require the same fields", () => {
    const required = Object.keys(shape).filter((key) => !shape[key]!.safeParse(undefined).success);
    expect(required.sort()).toEqual([...REQUIRED_FIELDS].sort());
    for (const field of REQUIRED_FIELDS) {
      const { [field]: _, ...without } = base;
      expect(SendEmailBody.safeParse(without).success, field).toBe(false);
    }
  });

  it("accept every documented field", () => {
    expect(Object.keys(samples).sort()).toEqual(
      Object.keys(shape)
        .filter((key) => !(REQUIRED_FIELDS as readonly string[]).includes(key))
        .sort(),
    );
    expect(checkEmail(base)).toHaveProperty("email");
    for (const [field, value] of Object.entries(samples)) {
      const body = { ...base, [field]: value };
      expect(SendEmailBody.safeParse(body).success, field).toBe(true);
      expect(checkEmail(body), field).toHaveProperty("email");
    }
    expect(SendBatchBody.safeParse({ emails: [{ ...base, ...samples }] }).success).toBe(true);
  });

  it("refuse a wrong type of the fields both check", () => {
    for (const field of ["from", "to", "subject", "html", "text", "cc", "bcc", "reply_to"]) {
      const body = { ...base, [field]: 42 };
      expect(SendEmailBody.safeParse(body).success, field).toBe(false);
      expect(checkEmail(body), field).toHaveProperty(["errors", field]);
    }
  });
});
