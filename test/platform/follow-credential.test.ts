// followCredential: an event stream that ends with `event: end` once its credential check says
// so, passes everything through while the check holds, and cancels its source when it ends or its
// reader leaves. Events are read off the stream; nothing here asserts a duration.
import { describe, expect, it } from "vitest";
import { followCredential } from "../../src/platform/follow-credential";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A source stream the test writes to, and whether (and why) it was cancelled. */
function source() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const state = { cancelled: false as boolean, reason: undefined as unknown };
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    cancel: (reason) => {
      state.cancelled = true;
      state.reason = reason;
    },
  });
  return { stream, state, write: (text: string) => controller.enqueue(encoder.encode(text)), close: () => controller.close() };
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  return text;
}

describe("followCredential", () => {
  it("passes the source through and closes with it while the credential holds", async () => {
    const src = source();
    let checks = 0;
    const out = followCredential(
      src.stream,
      async () => {
        checks++;
        return null;
      },
      { everyMs: 5 },
    );
    src.write("data: 1\n\n");
    const reader = out.getReader();
    expect(decoder.decode((await reader.read()).value)).toBe("data: 1\n\n");
    // Let a few checks pass, then more data and the source's end.
    while (checks < 3) await new Promise((r) => setTimeout(r, 5));
    src.write("data: 2\n\n");
    src.close();
    expect(decoder.decode((await reader.read()).value)).toBe("data: 2\n\n");
    expect((await reader.read()).done).toBe(true);
    expect(src.state.cancelled).toBe(false);
    // The timer stopped with the stream: no check after the end.
    const after = checks;
    await new Promise((r) => setTimeout(r, 30));
    expect(checks).toBe(after);
  });

  it("ends with event: end and the check's reason, and cancels the source, once the check says so", async () => {
    const src = source();
    let revoked = false;
    const out = followCredential(src.stream, async () => (revoked ? "signed_out" : null), { everyMs: 5 });
    src.write("data: before\n\n");
    const reader = out.getReader();
    expect(decoder.decode((await reader.read()).value)).toBe("data: before\n\n");
    revoked = true;
    let rest = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += decoder.decode(value);
    }
    expect(rest).toBe('event: end\ndata: {"reason":"signed_out"}\n\n');
    expect(src.state.cancelled).toBe(true);
    expect(src.state.reason).toBe("signed_out");
    // Writes to the source after the end go nowhere (the source is cancelled, not read).
    expect(() => src.write("data: late\n\n")).toThrow();
  });

  it("ends the stream when the check itself fails: a credential that cannot be confirmed is not followed", async () => {
    const src = source();
    const out = followCredential(
      src.stream,
      async () => {
        throw new Error("D1 unavailable");
      },
      { everyMs: 5 },
    );
    expect(await readAll(out)).toBe('event: end\ndata: {"reason":"credential_unverified"}\n\n');
    expect(src.state.cancelled).toBe(true);
  });

  it("cancels the source when its reader goes away", async () => {
    const src = source();
    let checks = 0;
    const out = followCredential(
      src.stream,
      async () => {
        checks++;
        return null;
      },
      { everyMs: 5 },
    );
    await out.cancel("client left");
    expect(src.state.cancelled).toBe(true);
    expect(src.state.reason).toBe("client left");
    const after = checks;
    await new Promise((r) => setTimeout(r, 30));
    expect(checks).toBe(after);
  });
});
