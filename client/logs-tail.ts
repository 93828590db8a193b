// The live tail of the log explorer (src/products/logs/console/logs.tsx): the [data-testid=tail-toggle]
// button opens an EventSource on its `data-tail-url` (served under /console with the session
// cookie) and puts each entry at the top of #log-rows, built as the server builds a row
// (logs-view.tsx LogRow). Pause holds new entries back (up to HELD_MAX, the rest counted as
// skipped) and shows them on resume; the server's `skipped` event (a reader that fell behind) and
// its `end` event (signed out, membership ended, project deleted) are said in #tail-status.

/** Entries held while paused; past it they are counted, not kept. */
const HELD_MAX = 500;
/** Rows kept on the page while tailing: the oldest go beyond it. */
const ROWS_MAX = 1_000;

interface Entry {
  id: string;
  stream: string | null;
  level: string;
  message: string;
  service: string | null;
  trace_id: string | null;
  span_id: string | null;
  metadata: Record<string, unknown> | null;
  timestamp: string;
  created_at: string;
}

const END_REASONS: Record<string, string> = {
  signed_out: "Live tail stopped: you were signed out.",
  membership_ended: "Live tail stopped: you are no longer a member of this team.",
  project_deleted: "Live tail stopped: the project was deleted.",
  credential_unverified: "Live tail stopped: your session could not be checked. Start it again.",
};

function entryTime(iso: string): string {
  return iso.slice(0, 23).replace("T", " ");
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: { class?: string; text?: string } = {}, ...children: Node[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.class) node.className = props.class;
  if (props.text !== undefined) node.textContent = props.text;
  for (const child of children) node.append(child);
  return node;
}

/** The markup of LogRow in logs-view.tsx. */
function row(entry: Entry): HTMLElement {
  const time = el("time", { text: entryTime(entry.timestamp) });
  time.dateTime = entry.timestamp;
  const summary = el("summary", {}, time, el("span", { class: `level level-${entry.level}`, text: entry.level }));
  if (entry.stream) summary.append(el("span", { class: "log-stream", text: entry.stream }));
  summary.append(el("span", { class: "log-message", text: entry.message }));
  const dl = el("dl");
  const fields: [string, string | null][] = [
    ["Service", entry.service],
    ["Trace", entry.trace_id],
    ["Span", entry.span_id],
    ["Received", `${entryTime(entry.created_at)} UTC`],
    ["Entry id", entry.id],
  ];
  for (const [name, value] of fields) if (value !== null) dl.append(el("dt", { text: name }), el("dd", {}, el("code", { text: value })));
  const detail = el("div", { class: "log-detail" }, dl);
  detail.append(
    entry.metadata
      ? el("pre", { class: "log-metadata", text: JSON.stringify(entry.metadata, null, 2) })
      : el("p", { class: "muted small", text: "No metadata." }),
  );
  const details = el("details", { class: "log-row live" }, summary, detail);
  details.dataset.testid = "log-row";
  details.dataset.level = entry.level;
  return details;
}

export function logTail(root: ParentNode): void {
  const toggle = root.querySelector<HTMLButtonElement>("[data-testid=tail-toggle]");
  const pause = root.querySelector<HTMLButtonElement>("button[data-tail-pause]");
  const rows = root.querySelector<HTMLElement>("#log-rows");
  const status = root.querySelector<HTMLElement>("#tail-status");
  if (!toggle || !pause || !rows || !status || !toggle.dataset.tailUrl) return;
  const url = toggle.dataset.tailUrl;
  toggle.hidden = false;

  let source: EventSource | null = null;
  let paused = false;
  let held: Entry[] = [];
  let heldSkipped = 0;
  let received = 0;

  const say = (text: string) => (status.textContent = text);
  const show = (entries: Entry[]) => {
    // Newest first, as the explorer lists them.
    for (const entry of entries) rows.prepend(row(entry));
    while (rows.children.length > ROWS_MAX) rows.lastElementChild?.remove();
    for (const hint of document.querySelectorAll("[data-testid=logs-empty], .explorer > .empty")) hint.remove();
  };

  const stop = (message: string) => {
    source?.close();
    source = null;
    toggle.setAttribute("aria-pressed", "false");
    toggle.textContent = "Live tail";
    pause.hidden = true;
    say(message);
  };

  const start = () => {
    received = 0;
    paused = false;
    held = [];
    heldSkipped = 0;
    source = new EventSource(url);
    toggle.setAttribute("aria-pressed", "true");
    toggle.textContent = "Stop live tail";
    pause.hidden = false;
    pause.textContent = "Pause";
    pause.setAttribute("aria-pressed", "false");
    say("Connecting…");
    source.onopen = () => say("Live: new entries appear at the top as they arrive.");
    source.onmessage = (event) => {
      const entry = JSON.parse(event.data) as Entry;
      received++;
      if (!paused) return show([entry]);
      if (held.length < HELD_MAX) held.push(entry);
      else heldSkipped++;
      say(`Paused: ${held.length + heldSkipped} new ${held.length + heldSkipped === 1 ? "entry" : "entries"} waiting.`);
    };
    source.addEventListener("skipped", (event) => {
      const { skipped } = JSON.parse((event as MessageEvent).data) as { skipped: number };
      say(`${skipped} ${skipped === 1 ? "entry was" : "entries were"} skipped: they arrived faster than this page could read them. Search to see every entry.`);
    });
    source.addEventListener("end", (event) => {
      const { reason } = JSON.parse((event as MessageEvent).data) as { reason: string };
      // After its longest run a tail ends and EventSource reconnects on its own; any other end is final.
      if (reason === "max_duration") return say("Reconnecting…");
      stop(END_REASONS[reason] ?? "Live tail stopped.");
    });
    source.onerror = () => {
      if (source?.readyState === EventSource.CLOSED) stop("Live tail stopped: the connection was refused. Reload the page to sign in again.");
      else say("Connection lost; reconnecting…");
    };
  };

  toggle.addEventListener("click", () => (source ? stop(`Live tail stopped after ${received} new ${received === 1 ? "entry" : "entries"}.`) : start()));
  pause.addEventListener("click", () => {
    paused = !paused;
    pause.setAttribute("aria-pressed", String(paused));
    pause.textContent = paused ? "Resume" : "Pause";
    if (paused) return say("Paused: new entries are held until you resume.");
    show(held);
    const skipped = heldSkipped;
    held = [];
    heldSkipped = 0;
    say(
      skipped > 0
        ? `Live again. ${skipped} entries that arrived while paused were skipped (more than ${HELD_MAX}).`
        : "Live: new entries appear at the top as they arrive.",
    );
  });
}
