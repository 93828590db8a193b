// Multipart posts: read as a stream (parts cut across chunk boundaries, the body abandoned at the
// form's limit without reading it to the end), files into R2 and served only as attachments,
// refusals (files off, too big, malformed) storing nothing.
import { describe, expect, it } from "vitest";
import { call, json, setupTeam } from "../../helpers/api";
import { usedOf } from "../../helpers/usage";
import { readMultipart } from "../../../src/products/forms/multipart";
import { createForm, env, multipart, post, postMultipart, storeSql, submissions } from "./forms.helpers";

/** A stream of `bytes` in chunks of `size`, counting how many bytes were pulled. */
function chunked(bytes: Uint8Array, size: number) {
  const stats = { pulled: 0, cancelled: false };
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      const chunk = bytes.slice(at, at + size);
      at += chunk.length;
      stats.pulled += chunk.length;
      controller.enqueue(chunk);
    },
    cancel() {
      stats.cancelled = true;
    },
  });
  return { stream, stats };
}

const LIMITS = { maxTextBytes: 1024 * 1024, maxFileBytes: 1024, filesAllowed: true, maxParts: 100 };

describe("the multipart reader", () => {
  it("reads the same parts whatever the chunk size (delimiters split across chunks)", async () => {
    const file = new Uint8Array(700).map((_, i) => (i * 7) % 256);
    const { body, contentType } = multipart([
      { name: "a", value: "one" },
      { name: "a", value: "two\r\n--not a boundary" },
      { name: "up", value: file, filename: "x.bin", type: "application/x-thing" },
    ]);
    const boundary = contentType.split("boundary=")[1]!;
    for (const size of [1, 3, 17, 64, 4096]) {
      const { stream } = chunked(body, size);
      const result = await readMultipart(stream, boundary, LIMITS);
      expect(result.fields, `chunk ${size}`).toEqual([
        ["a", "one"],
        ["a", "two\r\n--not a boundary"],
      ]);
      expect(result.files).toHaveLength(1);
      expect(result.files[0]).toMatchObject({ field: "up", name: "x.bin", contentType: "application/x-thing" });
      expect([...result.files[0]!.bytes]).toEqual([...file]);
    }
  });

  it("abandons a body past the file limit without reading it to the end", async () => {
    const { body, contentType } = multipart([{ name: "up", value: new Uint8Array(1024 * 1024), filename: "big.bin" }]);
    const { stream, stats } = chunked(body, 1024);
    await expect(readMultipart(stream, contentType.split("boundary=")[1]!, LIMITS)).rejects.toMatchObject({ reason: "files_too_big" });
    expect(stats.pulled).toBeLessThan(8 * 1024);
    expect(stats.cancelled).toBe(true);
  });

  it("refuses a body without its closing boundary, and a part without a name", async () => {
    const enc = new TextEncoder();
    const open = chunked(enc.encode('--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue'), 8);
    await expect(readMultipart(open.stream, "b", LIMITS)).rejects.toMatchObject({ reason: "malformed" });
    const nameless = chunked(enc.encode("--b\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n--b--\r\n"), 8);
    await expect(readMultipart(nameless.stream, "b", LIMITS)).rejects.toMatchObject({ reason: "malformed" });
  });
});

describe("multipart posts to /f/:form_id", () => {
  it("stores a file in R2 and serves it only as an attachment", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key, { files: { enabled: true, max_bytes: 64 * 1024 } });
    const html = "<html><script>alert(document.cookie)</script></html>";
    const res = await postMultipart(
      form.id,
      [
        { name: "name", value: "Ada" },
        { name: "cv", value: html, filename: "../../evil name<x>.html", type: "text/html" },
      ],
      { headers: { accept: "application/json" } },
    );
    expect(res.status).toBe(200);
    const [s] = await submissions(key, form.id);
    expect(s.fields).toEqual({ name: "Ada" });
    expect(s.files).toEqual([{ id: expect.any(String), field: "cv", name: "../../evil name<x>.html", content_type: "text/html", size: html.length }]);
    const file = await call("GET", `forms/${form.id}/submissions/${s.id}/files/${s.files[0]!.id}`, { key });
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("application/octet-stream");
    expect(file.headers.get("content-disposition")).toBe('attachment; filename="evil_name_x_.html"');
    expect(file.headers.get("x-content-type-options")).toBe("nosniff");
    expect(file.headers.get("content-security-policy")).toBe("sandbox");
    expect(await file.text()).toBe(html);
    expect((await call("GET", `forms/${form.id}/submissions/${s.id}/files/${crypto.randomUUID()}`, { key })).status).toBe(404);
  });

  it("refuses files past max_bytes with 413 FILES_TOO_BIG, storing nothing in R2 or the store, no unit", async () => {
    const { key, teamId } = await setupTeam();
    const form = await createForm(key, { files: { enabled: true, max_bytes: 1000 } });
    const res = await postMultipart(form.id, [{ name: "cv", value: new Uint8Array(1001), filename: "a.bin" }], { headers: { accept: "application/json" } });
    expect(res.status).toBe(413);
    expect(await json(res)).toMatchObject({ ok: false, code: "FILES_TOO_BIG", errors: [{ field: "cv", code: "FILES_TOO_BIG" }] });
    expect(await storeSql(form.id, "SELECT * FROM submissions")).toHaveLength(0);
    expect((await env.FORM_FILES.list({ prefix: `forms/${form.id}/` })).objects).toHaveLength(0);
    expect((await usedOf(teamId, "forms")) ?? 0).toBe(0);
  });

  it("abandons a 10 MB upload to a 1 KB form without reading it to the end", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key, { files: { enabled: true, max_bytes: 1024 } });
    const { body, contentType } = multipart([{ name: "cv", value: new Uint8Array(10 * 1024 * 1024), filename: "big.bin" }]);
    const { stream, stats } = chunked(body, 16 * 1024);
    const res = await post(form.id, stream, contentType, { headers: { accept: "application/json" } });
    expect(res.status).toBe(413);
    expect(stats.pulled).toBeLessThan(256 * 1024);
  });

  it("refuses a file where files are off with 422 FILES_NOT_ALLOWED; an empty file input is no file", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key);
    const res = await postMultipart(form.id, [{ name: "cv", value: "data", filename: "a.txt" }], { headers: { accept: "application/json" } });
    expect(res.status).toBe(422);
    expect(await json(res)).toEqual({ ok: false, errors: [{ field: "cv", code: "FILES_NOT_ALLOWED", message: "This form does not accept files" }] });
    const empty = await postMultipart(form.id, [
      { name: "name", value: "Ada" },
      { name: "cv", value: "", filename: "", type: "application/octet-stream" },
    ]);
    expect(empty.status).toBe(303);
    expect((await submissions(key, form.id))[0]!.files).toEqual([]);
  });

  it("refuses a malformed multipart body with 400 and text over 1 MB with 413", async () => {
    const { key, teamId } = await setupTeam();
    const form = await createForm(key, { files: { enabled: true } });
    const broken = await post(form.id, "--x\r\nnot headers at all", "multipart/form-data; boundary=x", { headers: { accept: "application/json" } });
    expect(broken.status).toBe(400);
    expect(await json(broken)).toMatchObject({ ok: false, code: "MALFORMED_BODY" });
    const noBoundary = await post(form.id, "x", "multipart/form-data", { headers: { accept: "application/json" } });
    expect(noBoundary.status).toBe(400);
    const text = await postMultipart(form.id, [{ name: "a", value: "x".repeat(1024 * 1024 + 1) }], { headers: { accept: "application/json" } });
    expect(text.status).toBe(413);
    expect(await storeSql(form.id, "SELECT * FROM submissions")).toHaveLength(0);
    expect((await usedOf(teamId, "forms")) ?? 0).toBe(0);
  });

  it("checks a required file field", async () => {
    const { key } = await setupTeam();
    const form = await createForm(key, { files: { enabled: true }, fields: [{ name: "cv", type: "file", required: true }] });
    const res = await postMultipart(form.id, [{ name: "other", value: "x" }], { headers: { accept: "application/json" } });
    expect(res.status).toBe(422);
    expect((await json(res)).errors).toEqual([{ field: "cv", code: "REQUIRED_FIELD_MISSING", message: "cv is required: attach a file" }]);
  });
});
