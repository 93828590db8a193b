// Submissions through the API: the list (inbox and spam, newest first, cursor paging), one
// submission, the spam / not-spam moves, deletion with its files, the CSV export (RFC 4180,
// formulas neutralised, streamed past one store page) and the retention by the store's alarm.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { formStore } from "../../../src/products/forms/forms.store";
import type { FormStore } from "../../../src/products/forms/store/form-store";
import { call, expectError, json, setupTeam } from "../../helpers/api";
import { createForm, env, postJson, postMultipart, storeSql } from "./forms.helpers";

describe("form submissions", () => {
  it("lists newest first with a cursor, reads one, and 404s an unknown one", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await json(await postJson(form.id, { n: String(i) }))).id);
    const first = await json(await call("GET", `forms/${form.id}/submissions?limit=2`, { key }));
    expect(first.data.map((s: { id: string }) => s.id)).toEqual([ids[4], ids[3]]);
    expect(first.pagination.has_more).toBe(true);
    const second = await json(await call("GET", `forms/${form.id}/submissions?limit=2&cursor=${first.pagination.next_cursor}`, { key }));
    expect(second.data.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    const third = await json(await call("GET", `forms/${form.id}/submissions?limit=2&cursor=${second.pagination.next_cursor}`, { key }));
    expect(third.data.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
    expect(third.pagination).toEqual({ next_cursor: null, has_more: false });
    const one = await json(await call("GET", `forms/${form.id}/submissions/${ids[0]}`, { key }));
    expect(one.data).toMatchObject({ id: ids[0], form_id: form.id, status: "inbox", fields: { n: "0" } });
    await expectError(await call("GET", `forms/${form.id}/submissions/${crypto.randomUUID()}`, { key }), 404, { error: "Submission not found" });
    await expectError(await call("GET", `forms/${form.id}/submissions?cursor=zzz`, { key }), 422, {
      error: "Validation failed",
      details: { cursor: ["is invalid"] },
    });
  });

  it("moves a submission to spam and back, sending nothing again", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key);
    const { id } = await json(await postJson(form.id, { a: "b" }));
    const spam = await call("POST", `forms/${form.id}/submissions/${id}/spam`, { key });
    expect((await json(spam)).data.status).toBe("spam");
    expect((await json(await call("GET", `forms/${form.id}/submissions?status=spam`, { key }))).data).toHaveLength(1);
    expect((await json(await call("GET", `forms/${form.id}/submissions`, { key }))).data).toHaveLength(0);
    const back = await call("POST", `forms/${form.id}/submissions/${id}/not-spam`, { key });
    expect((await json(back)).data.status).toBe("inbox");
    expect((await call("POST", `forms/${form.id}/submissions/${crypto.randomUUID()}/spam`, { key })).status).toBe(404);
  });

  it("deletes a submission with its files", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key, { files: { enabled: true } });
    await postMultipart(form.id, [{ name: "cv", value: "x", filename: "a.txt" }]);
    const [s] = (await json(await call("GET", `forms/${form.id}/submissions`, { key }))).data;
    expect((await env.FORM_FILES.list({ prefix: `forms/${form.id}/` })).objects).toHaveLength(1);
    expect((await call("DELETE", `forms/${form.id}/submissions/${s.id}`, { key })).status).toBe(204);
    expect((await env.FORM_FILES.list({ prefix: `forms/${form.id}/` })).objects).toHaveLength(0);
    expect((await call("DELETE", `forms/${form.id}/submissions/${s.id}`, { key })).status).toBe(404);
  });

  it("exports the inbox as CSV: RFC 4180 quoting, formulas neutralised, every page streamed, spam left out", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key, {
      fields: [
        { name: "name", type: "text" },
        { name: "note", type: "text" },
      ],
    });
    await postJson(form.id, { name: '=HYPERLINK("http://evil")', note: 'a "quoted", multi\nline' });
    await postJson(form.id, { name: "+cmd", note: "-2", _gotcha: "bot" });
    for (let i = 0; i < 205; i++) await formStore(env, form.id).add({ formId: form.id, teamId: "t", retentionDays: 90 }, row(i), false);
    const res = await call("GET", `forms/${form.id}/submissions/export`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/csv");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="form-${form.id}-inbox.csv"`);
    const text = await res.text();
    expect(text.endsWith("\r\n")).toBe(true);
    const rows = parse(text) as string[][];
    expect(rows[0]).toEqual(["id", "created_at", "name", "note", "subject", "reply_to", "files"]);
    expect(rows).toHaveLength(1 + 206);
    const evil = rows.find((r) => r[2]!.includes("HYPERLINK"))!;
    expect(evil[2]).toBe('\'=HYPERLINK("http://evil")');
    expect(evil[3]).toBe('a "quoted", multi\nline');
    expect(rows.some((r) => r[2] === "'+cmd")).toBe(false);
  });

  it("deletes submissions past the form's retention from the store's alarm, files included", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key, { retention_days: 1, files: { enabled: true } });
    await postMultipart(form.id, [{ name: "cv", value: "old", filename: "old.txt" }]);
    try {
      setClock(Date.now() + 2 * 86_400_000);
      await postJson(form.id, { fresh: "yes" });
      await storeSql(form.id, "SELECT 1");
      expect(await runDurableObjectAlarm(formStore(env, form.id))).toBe(true);
    } finally {
      setClock(null);
    }
    const left = await storeSql<{ fields: string }>(form.id, "SELECT fields FROM submissions");
    expect(left.map((r) => JSON.parse(r.fields))).toEqual([{ fresh: "yes" }]);
    expect((await env.FORM_FILES.list({ prefix: `forms/${form.id}/` })).objects).toHaveLength(0);
  });

  it("changing retention_days reaches the store, and the posts after it keep it", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key);
    await postJson(form.id, { a: "b" });
    await call("PATCH", `forms/${form.id}`, { key, body: { retention_days: 3 } });
    expect(await storeSql(form.id, "SELECT retention_days FROM state")).toEqual([{ retention_days: 3 }]);
    await postJson(form.id, { c: "d" });
    expect(await storeSql(form.id, "SELECT retention_days FROM state")).toEqual([{ retention_days: 3 }]);
    await formStore(env, form.id).add({ formId: form.id, teamId: "t", retentionDays: 5 }, row(0), false);
    expect(await storeSql(form.id, "SELECT retention_days FROM state")).toEqual([{ retention_days: 5 }]);
  });

  it("keeps the store's alarm: the retention check after a post, not moved by the next, brought forward by a due delivery, set again once run", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key);
    const store = formStore(env, form.id);
    const alarm = () => runInDurableObject(store, (_object, state) => state.storage.getAlarm());
    const hour = 3_600_000;
    const slack = 1000; // the store's clock and the test's may read a few ms apart
    let before = Date.now();
    await postJson(form.id, { a: "1" });
    const first = await alarm();
    expect(first).toBeGreaterThanOrEqual(before + hour - slack);
    expect(first).toBeLessThanOrEqual(Date.now() + hour);
    await postJson(form.id, { a: "2" });
    expect(await alarm()).toBe(first);
    expect(await runDurableObjectAlarm(store)).toBe(true);
    before = Date.now();
    await postJson(form.id, { a: "3" });
    const again = await alarm();
    expect(again).toBeGreaterThanOrEqual(before + hour - slack);
    expect(again).toBeLessThanOrEqual(Date.now() + hour);
    // A delivery due now (a webhook's first) brings it forward, though an alarm is set within the
    // hour. Read in the same invocation as the add: an alarm due at once may otherwise run (and set
    // the next) before a later call could see it.
    const forward = await runInDurableObject(store, async (instance, state) => {
      await (instance as FormStore).add({ formId: form.id, teamId: "t", retentionDays: 90 }, row(1), true);
      return state.storage.getAlarm();
    });
    expect(forward).not.toBeNull();
    expect(forward!).toBeLessThanOrEqual(Date.now() + slack);
  });
});

function row(i: number) {
  return {
    id: crypto.randomUUID(),
    status: "inbox" as const,
    fields: JSON.stringify({ name: `n${i}`, note: "" }),
    files: "[]",
    subject: null,
    reply_to: null,
    origin: null,
    created_at: new Date().toISOString(),
  };
}
