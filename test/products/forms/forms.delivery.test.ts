// What follows an accepted submission: the signed webhook (Standard Webhooks, verified here with
// the `standardwebhooks` library), sent by the form's store alarm, retried on the relay's
// schedule, attempts visible, re-sendable; and the notification mail (metered, visitor text
// framed and defanged, skipped when the mail quota is spent while the submission is kept).
import { runDurableObjectAlarm } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { RETRY_SCHEDULE_SECONDS } from "../../../src/products/relay/relay.retry";
import { formStore } from "../../../src/products/forms/forms.store";
import { call, json, setupTeam } from "../../helpers/api";
import { setUsed, usedOf } from "../../helpers/usage";
import { receiver, waitFor } from "../relay/relay.helpers";
import { createForm, env, postJson, postMultipart, storeSql } from "./forms.helpers";

let restore: (() => void) | null = null;
afterEach(() => {
  restore?.();
  restore = null;
});

/** Runs the form store's alarm now when one is set (the runtime also runs it by itself); answers false for waitFor. */
async function kick(formId: string): Promise<false> {
  await runDurableObjectAlarm(formStore(env, formId));
  return false;
}

const hookUrl = () => `http://127.0.0.1:9/form-hook-${crypto.randomUUID().slice(0, 8)}`;

async function deliveries(key: string, formId: string) {
  const res = await call("GET", `forms/${formId}/deliveries`, { key });
  expect(res.status).toBe(200);
  return (await json(res)).data as Array<{
    id: string;
    status: string;
    attempts: Array<{ number: number; status_code: number | null }>;
    next_attempt_at: string | null;
  }>;
}

describe("form webhooks", () => {
  it("delivers each accepted submission signed (Standard Webhooks), with 5-minute file links, never the file", async () => {
    const { key } = await setupTeam();
    const url = hookUrl();
    const hook = receiver([url], [200]);
    restore = hook.restore;
    const form = await createForm(key, { webhook_url: url, files: { enabled: true } });
    const res = await postMultipart(form.id, [
      { name: "email", value: "ada@example.com" },
      { name: "cv", value: "file body", filename: "cv.txt" },
    ]);
    expect(res.status).toBe(303);
    await waitFor(async () => hook.received.length > 0 || (await kick(form.id)));
    const [got] = hook.received;
    const headers = Object.fromEntries(got!.headers);
    const payload = new Webhook(form.webhook_secret!).verify(got!.body, headers) as {
      type: string;
      data: { form_id: string; submission: { id: string; fields: unknown; files: Array<{ url: string; name: string }> } };
    };
    expect(payload.type).toBe("form.submission");
    expect(payload.data.form_id).toBe(form.id);
    expect(payload.data.submission.fields).toEqual({ email: "ada@example.com" });
    expect(got!.body).not.toContain("file body");
    const link = payload.data.submission.files[0]!.url;
    expect(link).toMatch(new RegExp(`^http://app\\.test/f/${form.id}/files/`));
    const file = await call("GET", link);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-disposition")).toBe('attachment; filename="cv.txt"');
    expect(await file.text()).toBe("file body");
    const tampered = await call("GET", `${link.slice(0, -3)}abc`);
    expect(tampered.status).toBe(404);
    const [d] = await deliveries(key, form.id);
    expect(d).toMatchObject({ status: "delivered", attempts: [{ number: 1, status_code: 200 }] });
  });

  it("retries a failed delivery on the relay's schedule until it succeeds, every attempt visible", async () => {
    const { key } = await setupTeam();
    const url = hookUrl();
    const hook = receiver([url], [500, 200]);
    restore = hook.restore;
    const form = await createForm(key, { webhook_url: url });
    const before = Date.now();
    expect((await postJson(form.id, { a: "b" })).status).toBe(200);
    const store = formStore(env, form.id);
    await waitFor(async () => hook.received.length > 0 || (await kick(form.id)));
    const [first] = await waitFor(async () => {
      const list = await deliveries(key, form.id);
      return list[0]?.attempts.length === 1 ? list : undefined;
    });
    expect(first).toMatchObject({ status: "pending", attempts: [{ number: 1, status_code: 500 }] });
    const due = Date.parse(first!.next_attempt_at!);
    expect(due - before).toBeGreaterThanOrEqual(RETRY_SCHEDULE_SECONDS[1] * 1000 - 50);
    expect(due - Date.now()).toBeLessThanOrEqual(RETRY_SCHEDULE_SECONDS[1] * 1000);
    // Bring the retry forward rather than waiting 5 s.
    await storeSql(form.id, "UPDATE deliveries SET next_attempt_at = ?", Date.now() - 1);
    await runDurableObjectAlarm(store);
    const [second] = await deliveries(key, form.id);
    expect(second).toMatchObject({ status: "delivered", next_attempt_at: null, attempts: [{ number: 1 }, { number: 2, status_code: 200 }] });
    expect(hook.received[0]!.headers.get("webhook-id")).toBe(hook.received[1]!.headers.get("webhook-id"));
  });

  it("marks a delivery failed after the schedule's last attempt, and re-sends it on request", async () => {
    const { key } = await setupTeam();
    const url = hookUrl();
    const hook = receiver([url], [503]);
    restore = hook.restore;
    const form = await createForm(key, { webhook_url: url });
    const { id: sid } = await json(await postJson(form.id, { a: "b" }));
    const store = formStore(env, form.id);
    await waitFor(async () => hook.received.length > 0 || (await kick(form.id)));
    await waitFor(async () => (await deliveries(key, form.id))[0]?.attempts.length === 1);
    await storeSql(form.id, "UPDATE deliveries SET attempts = ?, next_attempt_at = ?", RETRY_SCHEDULE_SECONDS.length - 1, Date.now() - 1);
    await runDurableObjectAlarm(store);
    const [last] = await deliveries(key, form.id);
    expect(last).toMatchObject({ status: "failed", next_attempt_at: null });
    hook.restore();
    const ok = receiver([url], [200]);
    restore = ok.restore;
    const resent = await call("POST", `forms/${form.id}/submissions/${sid}/resend`, { key });
    expect(resent.status).toBe(202);
    await waitFor(async () => ok.received.length > 0 || (await kick(form.id)));
    const list = await waitFor(async () => {
      const l = await deliveries(key, form.id);
      return l[0]?.status === "delivered" ? l : undefined;
    });
    expect(list.map((d) => d.status)).toEqual(["delivered", "failed"]);
    const own = await call("GET", `forms/${form.id}/submissions/${sid}/deliveries`, { key });
    expect((await json(own)).data).toHaveLength(2);
  });

  it("refuses a re-send without a webhook or of spam (422)", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key);
    const { id } = await json(await postJson(form.id, { a: "b" }));
    expect((await call("POST", `forms/${form.id}/submissions/${id}/resend`, { key })).status).toBe(422);
  });
});

describe("notification mail", () => {
  it("mails accepted members the submission as plain text framed as a visitor's, links defanged, one mail unit each", async () => {
    const { key, teamId } = await setupTeam();
    const form = await createForm(key, { name: "Contact https://evil.example", notify_emails: ["owner@example.com"] });
    const res = await postJson(
      form.id,
      { message: "Click https://phish.example/login or mail me@evil.example\r\nBcc: x@y.z", _subject: "Urgent <b>now</b>" },
      { settled: true },
    );
    expect(res.status).toBe(200);
    const rows = await env.DB.prepare('SELECT kind, "to", subject, text, html FROM platform_outbox WHERE team_id = ?')
      .bind(teamId)
      .all<Record<string, string | null>>();
    expect(rows.results).toHaveLength(1);
    const mail = rows.results[0]!;
    expect(mail).toMatchObject({ kind: "form_submission", to: "owner@example.com", html: null });
    expect(mail.subject).toBe("New submission: Contact evil[.]example");
    const text = mail.text!;
    expect(text).toContain("written by a visitor of your site");
    expect(text).toContain("phish[.]example/login");
    expect(text).toContain("me[at]evil[.]example");
    expect(text).not.toContain("https://phish");
    expect(text).toContain("  > Bcc: x[at]y[.]z");
    expect(text).toContain("Subject: Urgent <b>now</b>");
    expect(await usedOf(teamId, "mail")).toBe(1);
  });

  it("keeps the submission and skips the mail when the team's mail quota is spent", async () => {
    const { key, teamId } = await setupTeam({ plan: "free" });
    const form = await createForm(key, { notify_emails: ["owner@example.com"] });
    await setUsed(teamId, "mail", 3000);
    const res = await postJson(form.id, { a: "b" }, { settled: true });
    expect(res.status).toBe(200);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM platform_outbox WHERE team_id = ? AND kind = 'form_submission'")
      .bind(teamId)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
    expect(await storeSql(form.id, "SELECT id FROM submissions")).toHaveLength(1);
    expect(await usedOf(teamId, "forms")).toBe(1);
  });
});
