// Open streams follow their credential (docs/ARCHITECTURE.md "Open streams follow their credential"): an
// event stream that outlives the request that authorised it re-checks that authority every
// CREDENTIAL_CHECK_MS while it is open, and ends with the same `event: end` a stream ends with on
// its own as soon as a check says no. The check runs in the request that serves the stream (its
// I/O lives as long as the answer does), and passes the reader's backpressure through untouched.

/** How often an open stream re-checks its credential: it ends at most this long after the credential does (plus one check). */
export const CREDENTIAL_CHECK_MS = 5_000;

const encoder = new TextEncoder();

/**
 * Wraps a Server-Sent Events stream so it ends when `check` stops answering null: `check` returns
 * the reason to end (e.g. `"signed_out"`), or null while the credential holds. A check that throws
 * ends the stream too (`"credential_unverified"`): a stream is never kept open on a credential
 * that could not be confirmed; the client reconnects and is authorised afresh. The source is
 * cancelled when the stream ends or its reader goes away, so whatever holds a slot for it frees it.
 */
export function followCredential(
  source: ReadableStream<Uint8Array>,
  check: () => Promise<string | null>,
  options: { everyMs?: number } = {},
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let timer: ReturnType<typeof setInterval> | undefined;
  let ended = false;
  let checking = false;
  const stop = () => {
    ended = true;
    clearInterval(timer);
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        timer = setInterval(async () => {
          if (ended || checking) return;
          checking = true;
          const reason = await check().catch(() => "credential_unverified");
          checking = false;
          if (ended || reason === null) return;
          stop();
          try {
            controller.enqueue(encoder.encode(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`));
            controller.close();
          } catch {
            // the reader already went away
          }
          void reader.cancel(reason).catch(() => undefined);
        }, options.everyMs ?? CREDENTIAL_CHECK_MS);
      },
      async pull(controller) {
        const { value, done } = await reader.read();
        if (ended) return;
        if (done) {
          stop();
          controller.close();
          return;
        }
        controller.enqueue(value);
      },
      cancel(reason) {
        stop();
        return reader.cancel(reason);
      },
    },
    // Nothing read ahead of the reader: the source sees the reader's own pace.
    { highWaterMark: 0 },
  );
}
