// Live tail: GET /logs/projects/:id/tail streams new entries as Server-Sent Events from the
// project's store. Events are read off the stream itself; nothing here waits on a clock.
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { logStore } from "../../../src/products/logs/logs.store";
import type { LogStore } from "../../../src/products/logs/store/log-store";
import { CREDENTIAL_CHECK_MS, MAX_TAIL_BUFFER_BYTES, MAX_TAIL_MS, MAX_TAILS } from "../../../src/products/logs/store/log-tails";
import { addKey, admin, call, expectError, json } from "../../helpers/api";
import { allEntries, ingest, ingestBatch, ndjson, setupProject, type LogsFixture } from "./helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

/** An open tail: reads whole SSE events (blocks ending in a blank line) off the response body. */
class Tail {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffer = "";
  done = false;

  constructor(readonly res: Response) {
    this.reader = res.body!.getReader();
  }

  /** The next event block (comment-only blocks included), or null at the end of the stream. */
  async next(): Promise<string | null> {
    for (;;) {
      const at = this.buffer.indexOf("\n\n");
      if (at !== -1) {
        const block = this.buffer.slice(0, at);
        this.buffer = this.buffer.slice(at + 2);
        return block;
      }
      const { value, done } = await this.reader.read();
      if (done) {
        this.done = true;
        return null;
      }
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  /** The next `data:` event's JSON, skipping comments. */
  async nextData(): Promise<any> {
    for (;;) {
      const block = await this.next();
      if (block === null) throw new Error("stream ended");
      const data = block.split("\n").find((line) => line.startsWith("data: "));
      if (data && !block.includes("event: ")) return JSON.parse(data.slice(6));
    }
  }

  cancel(): Promise<void> {
    return this.reader.cancel();
  }
}

async function openTail(f: LogsFixture, query = ""): Promise<Tail> {
  const res = await call("GET", `logs/projects/${f.projectId}/tail${query ? `?${query}` : ""}`, { key: f.key });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
  const tail = new Tail(res);
  // The opening block: the reconnect delay and a comment.
  expect(await tail.next()).toMatch(/^retry: 1000\n: tail of project /);
  return tail;
}

const tailCount = (f: LogsFixture) => logStore(env, f.projectId).tailCount();

/** Runs the store's keep-alive sweep at `at` (the store's interval does so every 15 s). */
function sweep(f: LogsFixture, at = Date.now()): Promise<void> {
  return runInDurableObject(logStore(env, f.projectId), (store) => (store as unknown as LogStore).sweepTails(at));
}

describe("live tail", () => {
  it("streams each new entry as one data event, the same JSON as the entries endpoint", async () => {
    const f = await setupProject();
    await ingest(f.token, { message: "before the tail" });
    const tail = await openTail(f);
    expect(await tailCount(f)).toBe(1);
    expect((await ingest(f.token, { message: "hello", level: "warn", stream: "web", metadata: { a: 1 }, host: "h1" })).status).toBe(202);
    const event = await tail.nextData();
    const [stored] = await allEntries(f, "q=hello");
    expect(event).toEqual(stored);
    expect(event).toMatchObject({ message: "hello", level: "warn", stream: "web", metadata: { a: 1, host: "h1" }, project_id: f.projectId });

    await ingestBatch(f.token, ndjson([{ message: "b1" }, { message: "b2" }]));
    expect((await tail.nextData()).message).toBe("b1");
    expect((await tail.nextData()).message).toBe("b2");
    await tail.cancel();
  });

  it("applies the filters: level, stream, service, trace_id and q (case-insensitive)", async () => {
    const f = await setupProject();
    const tail = await openTail(f, "level=error&stream=api&service=svc&trace_id=t1&q=TimeOut");
    await ingestBatch(
      f.token,
      ndjson([
        { message: "db timeout", level: "info", stream: "api", service: "svc", trace_id: "t1" },
        { message: "db timeout", level: "error", stream: "web", service: "svc", trace_id: "t1" },
        { message: "db timeout", level: "error", stream: "api", service: "other", trace_id: "t1" },
        { message: "db timeout", level: "error", stream: "api", service: "svc", trace_id: "t2" },
        { message: "db error", level: "error", stream: "api", service: "svc", trace_id: "t1" },
        { message: "db TIMEOUT one", level: "error", stream: "api", service: "svc", trace_id: "t1" },
      ]),
    );
    await ingest(f.token, { message: "a timeout two", level: "error", stream: "api", service: "svc", trace_id: "t1" });
    expect((await tail.nextData()).message).toBe("db TIMEOUT one");
    expect((await tail.nextData()).message).toBe("a timeout two");
    await tail.cancel();
  });

  it("a client that disconnects frees its slot; the cap answers 429 in the logs shape", async () => {
    const f = await setupProject();
    const tails: Tail[] = [];
    for (let i = 0; i < MAX_TAILS; i++) tails.push(await openTail(f));
    expect(await tailCount(f)).toBe(MAX_TAILS);
    await expectError(await call("GET", `logs/projects/${f.projectId}/tail`, { key: f.key }), 429, {
      error: `Too many live tails open for this project (max ${MAX_TAILS})`,
    });
    // Another project has its own slots.
    const other = await setupProject();
    const otherTail = await openTail(other);

    // A vanished client is noticed at the next write to it: an entry, or the keep-alive comment.
    await tails.pop()!.cancel();
    await sweep(f);
    await vi.waitFor(async () => expect(await tailCount(f)).toBe(MAX_TAILS - 1));
    tails.push(await openTail(f));
    // At the cap, a request pings the open tails first: a client that just went away leaves room.
    await tails.shift()!.cancel();
    tails.push(await openTail(f));
    expect(await tailCount(f)).toBe(MAX_TAILS);
    await expectError(await call("GET", `logs/projects/${f.projectId}/tail`, { key: f.key }), 429, {
      error: `Too many live tails open for this project (max ${MAX_TAILS})`,
    });
    // The others still receive.
    await ingest(f.token, { message: "to all" });
    for (const tail of tails) expect((await tail.nextData()).message).toBe("to all");
    for (const tail of tails) await tail.cancel();
    await otherTail.cancel();
    await ingest(f.token, { message: "to nobody" });
    await vi.waitFor(async () => expect(await tailCount(f)).toBe(0));
  });

  it("sends keep-alive comments and ends the stream after its maximum duration", async () => {
    const f = await setupProject();
    const tail = await openTail(f);
    await sweep(f);
    expect(await tail.next()).toBe(": keep-alive");
    await sweep(f, Date.now() + MAX_TAIL_MS);
    expect(await tail.next()).toBe('event: end\ndata: {"reason":"max_duration"}');
    expect(await tail.next()).toBeNull();
    expect(await tailCount(f)).toBe(0);
  });

  it("regression (issue 23, finding 6): a revoked key's open tail ends at the next credential check; other keys' tails go on", async () => {
    const f = await setupProject();
    const other = await addKey(f.teamId, ["logs:read"]);
    const revokedTail = new Tail(await call("GET", `logs/projects/${f.projectId}/tail`, { key: other.key }));
    expect(await revokedTail.next()).toMatch(/^retry: 1000/);
    const keptTail = await openTail(f);
    expect((await admin("DELETE", `keys/${other.id}`)).status).toBe(204);
    const ended = await runInDurableObject(logStore(env, f.projectId), (store) => (store as unknown as LogStore).checkTailCredentials());
    expect(ended).toBe(1);
    expect(await revokedTail.next()).toBe('event: end\ndata: {"reason":"credential_revoked"}');
    expect(await revokedTail.next()).toBeNull();
    expect(await tailCount(f)).toBe(1);
    await ingest(f.token, { message: "still here" });
    expect((await keptTail.nextData()).message).toBe("still here");
    await keptTail.cancel();
  });

  it(`the store's own interval ends a revoked key's tail within ${CREDENTIAL_CHECK_MS / 1000} s, on the real stream`, async () => {
    expect(CREDENTIAL_CHECK_MS).toBeLessThanOrEqual(10_000);
    const f = await setupProject();
    const other = await addKey(f.teamId, ["logs:read"]);
    const tail = new Tail(await call("GET", `logs/projects/${f.projectId}/tail`, { key: other.key }));
    expect(await tail.next()).toMatch(/^retry: 1000/);
    expect((await admin("DELETE", `keys/${other.id}`)).status).toBe(204);
    // Nothing calls the check here: the stream ends by itself.
    let block: string | null;
    do block = await tail.next();
    while (block?.startsWith(":"));
    expect(block).toBe('event: end\ndata: {"reason":"credential_revoked"}');
    expect(await tail.next()).toBeNull();
  });

  it("skips entries for a reader that falls behind, bounded in bytes, and says how many", async () => {
    const f = await setupProject();
    const tail = await openTail(f);
    // Nobody reads while ~2.5 MB of entries arrive: about 1 MB is held for the reader, the rest skipped.
    const big = "x".repeat(30_000);
    const lines = Array.from({ length: 80 }, (_, i) => ({ message: `${i} ${big}` }));
    expect((await json(await ingestBatch(f.token, ndjson(lines)))).count).toBe(80);
    let received = 0;
    let skipped = 0;
    let bytes = 0;
    while (received + skipped < 80) {
      const block = (await tail.next())!;
      if (block.startsWith("data: ")) {
        received++;
        bytes += block.length;
      } else if (block.startsWith("event: skipped")) skipped += JSON.parse(block.split("\n")[1].slice(6)).skipped;
      else if (block === ": keep-alive") continue;
      // Nothing else arrives here; the skipped notice comes once the reader caught up (next entry or keep-alive).
      if (received + skipped < 80 && received > 0 && skipped === 0 && received * 30_000 >= MAX_TAIL_BUFFER_BYTES - 30_000) {
        await sweep(f);
      }
    }
    // What the store holds for the reader is capped; the transport may have taken a chunk more ahead.
    expect(bytes).toBeLessThanOrEqual(MAX_TAIL_BUFFER_BYTES + 64 * 1024);
    expect(received).toBeGreaterThan(0);
    expect(skipped).toBeGreaterThan(0);
    expect(skipped).toBe(80 - received);
    await tail.cancel();
  });

  it("answers 404 in the logs shape for another team's or an unknown project, 422 for a bad filter", async () => {
    const f = await setupProject();
    const other = await setupProject();
    await expectError(await call("GET", `logs/projects/${f.projectId}/tail`, { key: other.key }), 404, { error: "Project not found" });
    await expectError(await call("GET", `logs/projects/${crypto.randomUUID()}/tail`, { key: f.key }), 404, { error: "Project not found" });
    const bad = await call("GET", `logs/projects/${f.projectId}/tail?level=loud`, { key: f.key });
    expect(bad.status).toBe(422);
    expect((await json(bad)).details.level).toBeDefined();
    expect(await tailCount(f)).toBe(0);
    const readOnly = await setupProject({ scopes: ["logs:write"] });
    await expectError(await call("GET", `logs/projects/${readOnly.projectId}/tail`, { key: readOnly.key }), 403, { error: "Insufficient scope" });
  });

  it("ends open tails when the project is deleted", async () => {
    const f = await setupProject();
    const tail = await openTail(f);
    expect((await call("DELETE", `logs/projects/${f.projectId}`, { key: f.key })).status).toBe(204);
    expect(await tail.next()).toBe('event: end\ndata: {"reason":"project_deleted"}');
    expect(await tail.next()).toBeNull();
  });
});
