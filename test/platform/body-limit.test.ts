// Every route has a body limit, answered 413 in its product's error shape before anything parses
// the body (DESIGN.md "Sizes"): 1 MB for JSON unless the product documents another.
import { describe, expect, it } from "vitest";
import { JSON_BODY_LIMIT } from "../../src/platform/body";
import { activeSurvey } from "../products/surveys/helpers";
import { call, json, setupTeam } from "../helpers/api";

const TOO_LARGE = "Payload too large (max 1 MB)";

/** A JSON body one byte over the default limit. */
function oversized(bytes = JSON_BODY_LIMIT + 1): string {
  return JSON.stringify({ name: "x".repeat(bytes - 11) });
}

/** A body sent as a stream, without a Content-Length, so the limit must count bytes as they come. */
function streamed(totalBytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      const size = Math.min(64 * 1024, totalBytes - sent);
      sent += size;
      controller.enqueue(new Uint8Array(size).fill(0x61));
    },
  });
}

describe("body limits", () => {
  it("answers 413 in each product's shape for a JSON body over 1 MB", async () => {
    const team = await setupTeam();
    const cases: Array<[string, string, unknown]> = [
      ["POST", "surveys", { error: TOO_LARGE }],
      ["POST", "push/apps", { error: TOO_LARGE }],
      ["POST", "logs/projects", { error: TOO_LARGE }],
      ["POST", "webhooks/sources", { error: TOO_LARGE }],
      ["POST", "webhooks", { error: TOO_LARGE }],
      [
        "POST",
        `orgs/${team.teamId}/projects/p1/audit/findings`,
        { data: null, meta: { request_id: expect.any(String) }, error: { code: "payload_too_large", message: TOO_LARGE } },
      ],
    ];
    for (const [method, path, body] of cases) {
      const res = await call(method, path, { key: team.key, raw: oversized(), headers: { "content-type": "application/json" } });
      expect({ path, status: res.status }).toEqual({ path, status: 413 });
      expect({ path, body: await json(res) }).toEqual({ path, body });
    }
  });

  it("refuses an anonymous 30 MB body on a public survey route with 413 without parsing it", async () => {
    const { team, survey } = await activeSurvey([{ type: "text", title: "Q" }]);
    const declared = await call("POST", `surveys/${survey.slug}/responses`, {
      raw: oversized(30 * 1024 * 1024),
      headers: { "content-type": "application/json" },
    });
    expect(declared.status).toBe(413);
    expect(await json(declared)).toEqual({ error: TOO_LARGE });
    // Without a Content-Length the bytes are counted as they arrive.
    const chunked = await call("POST", `surveys/${survey.slug}/responses`, {
      raw: streamed(3 * 1024 * 1024),
      headers: { "content-type": "application/json" },
    });
    expect(chunked.status).toBe(413);
    expect(await json(chunked)).toEqual({ error: TOO_LARGE });
    // Nothing was started.
    const list = await json(await call("GET", `surveys/${survey.id}/responses`, { key: team.key }));
    expect(list.data).toEqual([]);
  });

  it("lets a body at the limit through to validation", async () => {
    const team = await setupTeam();
    const res = await call("POST", "surveys", { key: team.key, raw: oversized(JSON_BODY_LIMIT), headers: { "content-type": "application/json" } });
    expect(res.status).toBe(422);
  });

  it("keeps the documented limits of the routes that read their bodies themselves", async () => {
    const team = await setupTeam();
    // Mail send: 10 MiB, answered as a validation error on `_body` (mail's documented shape).
    const mail = await call("POST", "emails", { key: team.key, raw: oversized(2 * 1024 * 1024), headers: { "content-type": "application/json" } });
    expect(mail.status).toBe(400); // read and parsed: its fields are what is wrong, not its size
    const overMail = await call("POST", "emails", { key: team.key, raw: oversized(10 * 1024 * 1024 + 1), headers: { "content-type": "application/json" } });
    expect(await json(overMail)).toEqual({ error: "Validation failed", details: { _body: ["must be at most 10 MiB"] } });
  });
});
