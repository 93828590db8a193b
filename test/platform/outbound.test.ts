// readCapped reads at most the limit of an outbound answer and cancels the rest of the stream.
import { describe, expect, it } from "vitest";
import { OUTBOUND_READ_LIMIT, readCapped } from "../../src/platform/outbound";

function streamOf(chunks: number, chunkSize: number, onPull: () => void): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      onPull();
      if (sent >= chunks) return controller.close();
      sent++;
      controller.enqueue(new Uint8Array(chunkSize).fill(97));
    },
  });
}

describe("readCapped", () => {
  it("reads a small body whole", async () => {
    expect(await readCapped(new Response("hello"))).toBe("hello");
  });

  it("stops at the limit of a huge body without reading the rest", async () => {
    let pulls = 0;
    const body = streamOf(10_000, 16 * 1024, () => pulls++);
    const text = await readCapped(new Response(body));
    expect(text.length).toBe(OUTBOUND_READ_LIMIT);
    expect(pulls).toBeLessThan(10);
  });

  it("honours a smaller limit and an empty body", async () => {
    expect(await readCapped(new Response("abcdef"), 3)).toBe("abc");
    expect(await readCapped(new Response(null))).toBe("");
  });
});
