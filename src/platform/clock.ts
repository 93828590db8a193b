// The one clock of the platform. Everything that reads the time calls now(), so tests can move
// it (rate-limit windows, month rollover, link expiry) without touching the system clock.

let override: (() => number) | null = null;

/** Current time in milliseconds since the epoch. */
export function nowMs(): number {
  return override ? override() : Date.now();
}

/** Current time as a Date. */
export function now(): Date {
  return new Date(nowMs());
}

/** Current time as an ISO 8601 UTC string. */
export function nowIso(): string {
  return now().toISOString();
}

/** Current time in whole Unix seconds. */
export function nowSeconds(): number {
  return Math.floor(nowMs() / 1000);
}

/**
 * Test hook: pin the clock to a fixed instant (ms or Date), or pass null to return to real time.
 * Only tests call this; nothing in a request path does.
 */
export function setClock(at: number | Date | null): void {
  if (at === null) {
    override = null;
    return;
  }
  const fixed = typeof at === "number" ? at : at.getTime();
  override = () => fixed;
}

/** ISO 8601 UTC timestamp truncated to whole seconds (report records use one-second resolution). */
export function isoSeconds(ms: number = nowMs()): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}
