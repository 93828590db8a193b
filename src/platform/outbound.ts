// Reading answers of outbound calls to tenant-chosen URLs (webhook receivers, push services, chat
// and alert webhooks, the mail provider). A receiver decides how much it sends back, so the platform
// reads at most a fixed number of bytes and cancels the rest of the stream.

/** The most bytes of an outbound response body the platform ever reads. */
export const OUTBOUND_READ_LIMIT = 64 * 1024;

/**
 * Reads a response body as text, at most `limit` bytes (a multi-byte character cut at the limit
 * is replaced). The rest of the body is cancelled, never buffered. Never throws: a broken stream
 * yields what was read so far.
 */
export async function readCapped(response: Response, limit: number = OUTBOUND_READ_LIMIT): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = limit - size;
      const chunk = value.byteLength > room ? value.subarray(0, room) : value;
      chunks.push(chunk);
      size += chunk.byteLength;
    }
  } catch {
    // A stream that breaks mid-way: keep what arrived.
  } finally {
    reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/** Drains nothing: cancels a response body the caller does not need, so the connection is freed. */
export async function discardBody(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => {});
}
