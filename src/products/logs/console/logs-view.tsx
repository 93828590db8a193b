/** @jsxImportSource hono/jsx */
// What the log pages draw, as plain functions of data: an entry row that opens to its metadata
// (the live tail's browser code, client/logs-tail.ts, builds the same markup), the histogram of
// entries by level (an SVG drawn here, with its numbers as a table for screen readers), the
// search form, and the curl command of an empty project.
import { html } from "hono/html";
import type { Histogram } from "../log-histogram";
import { LOG_LEVELS } from "../../../db/schema/logs";
import type { entryView } from "../logs.store";

/** An entry as the entry query answers it (logs.store.ts entryView, what the API returns). */
export type EntryView = ReturnType<typeof entryView>;

/** Time ranges of the explorer, by the name the `range` parameter takes. */
export const RANGES = {
  "15m": { label: "Last 15 minutes", ms: 15 * 60_000 },
  "1h": { label: "Last hour", ms: 3_600_000 },
  "6h": { label: "Last 6 hours", ms: 6 * 3_600_000 },
  "24h": { label: "Last 24 hours", ms: 86_400_000 },
  "7d": { label: "Last 7 days", ms: 7 * 86_400_000 },
  "30d": { label: "Last 30 days", ms: 30 * 86_400_000 },
} as const;
export type RangeName = keyof typeof RANGES;
export const DEFAULT_RANGE: RangeName = "24h";

/** An instant as the explorer shows it: UTC to the millisecond. */
export function entryTime(iso: string): string {
  return iso.slice(0, 23).replace("T", " ");
}

/**
 * One entry: a disclosure whose summary is the line and whose body is every field and the metadata.
 * Written with Hono's `html` template (every value escaped as JSX escapes it) rather than JSX: the
 * explorer draws 50 of these a page, and a template renders them without a node per element (the
 * page's render cost in the `console-logs` figure). The markup is the JSX's, whitespace included.
 */
export function LogRow(props: { entry: EntryView }) {
  const e = props.entry;
  const fields: [string, string | null][] = [
    ["Service", e.service],
    ["Trace", e.trace_id],
    ["Span", e.span_id],
    ["Received", `${entryTime(e.created_at)} UTC`],
    ["Entry id", e.id],
  ];
  const details = fields.filter(([, value]) => value !== null).map(([name, value]) => html`<dt>${name}</dt><dd><code>${value}</code></dd>`);
  const stream = e.stream ? html`<span class="log-stream">${e.stream}</span>` : null;
  const metadata = e.metadata ? html`<pre class="log-metadata">${JSON.stringify(e.metadata, null, 2)}</pre>` : html`<p class="muted small">No metadata.</p>`;
  return html`<details class="log-row" data-testid="log-row" data-level="${e.level}"><summary><time datetime="${e.timestamp}">${entryTime(e.timestamp)}</time><span class="level level-${e.level}">${e.level}</span>${stream}<span class="log-message">${e.message}</span></summary><div class="log-detail"><dl>${details}</dl>${metadata}</div></details>`;
}

const WIDTH = 720;
const HEIGHT = 90;
/** Stacking order of the bars, bottom up: the levels people look for first sit on the baseline. */
const STACK = ["fatal", "error", "warn", "info", "debug"] as const;

function bucketLabel(seconds: number): string {
  if (seconds < 3600) return `${seconds / 60} minute${seconds === 60 ? "" : "s"}`;
  if (seconds < 86_400) return `${seconds / 3600} hour${seconds === 3600 ? "" : "s"}`;
  return `${seconds / 86_400} day${seconds === 86_400 ? "" : "s"}`;
}

/** Entries by level over the range: stacked bars drawn on the server, and the same numbers as a table. */
export function HistogramChart(props: { histogram: Histogram; since: string; until: string }) {
  const { histogram } = props;
  const n = histogram.buckets.length;
  const step = WIDTH / Math.max(n, 1);
  const max = Math.max(1, ...histogram.buckets.map((b) => b.total));
  const per = bucketLabel(histogram.bucket_seconds);
  const summary = `Entries per ${per} by level, ${entryTime(props.since).slice(0, 16)} to ${entryTime(props.until).slice(0, 16)} UTC: ${histogram.total} in all`;
  return (
    <figure class="histogram" data-testid="histogram" data-total={histogram.total}>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} preserveAspectRatio="none" role="img" aria-labelledby="histogram-title" class="histogram-chart">
        <title id="histogram-title">{summary}</title>
        <line x1="0" y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} class="histogram-axis" />
        {histogram.buckets.map((bucket, i) => {
          let y = HEIGHT;
          return STACK.map((level) => {
            const count = bucket.counts[level];
            if (!count) return null;
            const height = Math.max((count / max) * (HEIGHT - 4), 1.5);
            y -= height;
            return (
              <rect x={(i * step + step * 0.1).toFixed(2)} y={y.toFixed(2)} width={(step * 0.8).toFixed(2)} height={height.toFixed(2)} class={`bar-${level}`} />
            );
          });
        })}
      </svg>
      <figcaption class="histogram-caption">
        <span class="muted small">
          <time datetime={props.since}>{entryTime(props.since).slice(0, 16)}</time>
        </span>
        <span class="legend small">
          {STACK.map((level) => (
            <span class="legend-item">
              <span class={`swatch swatch-${level}`} aria-hidden="true"></span>
              {level}
            </span>
          ))}
          <span class="muted">
            · {histogram.total.toLocaleString("en-US")} {histogram.total === 1 ? "entry" : "entries"}, one bar per {per}
          </span>
        </span>
        <span class="muted small">
          <time datetime={props.until}>{entryTime(props.until).slice(0, 16)}</time>
        </span>
      </figcaption>
      <table class="skip">
        <caption>{summary}. Periods without entries are left out.</caption>
        <thead>
          <tr>
            <th scope="col">From (UTC)</th>
            {LOG_LEVELS.map((level) => (
              <th scope="col">{level}</th>
            ))}
            <th scope="col">total</th>
          </tr>
        </thead>
        <tbody>
          {histogram.buckets
            .filter((b) => b.total > 0)
            .map((b) => (
              <tr>
                <th scope="row">{entryTime(b.at).slice(0, 16)}</th>
                {LOG_LEVELS.map((level) => (
                  <td>{b.counts[level]}</td>
                ))}
                <td>{b.total}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </figure>
  );
}

export interface SearchState {
  q: string;
  level: string;
  stream: string;
  range: RangeName;
}

/** The explorer's search: a GET form, so a search is a link that can be shared and works without JavaScript. */
export function SearchForm(props: { action: string; state: SearchState; streams: string[] }) {
  const { state } = props;
  const streams = state.stream && !props.streams.includes(state.stream) ? [state.stream, ...props.streams] : props.streams;
  return (
    <form method="get" action={props.action} class="log-search" role="search">
      <div class="field grow">
        <label for="log-q">Search messages</label>
        <input id="log-q" type="search" name="q" value={state.q} maxlength={200} placeholder="Text in the message, e.g. payment failed" />
      </div>
      <div class="field">
        <label for="log-level">Level</label>
        <select id="log-level" name="level">
          <option value="">Any level</option>
          {LOG_LEVELS.map((level) => (
            <option value={level} selected={state.level === level}>
              {level}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="log-stream">Stream</label>
        <select id="log-stream" name="stream">
          <option value="">Any stream</option>
          {streams.map((name) => (
            <option value={name} selected={state.stream === name}>
              {name}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="log-range">Time</label>
        <select id="log-range" name="range">
          {Object.entries(RANGES).map(([name, range]) => (
            <option value={name} selected={state.range === name}>
              {range.label}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <button type="submit">Search</button>
      </div>
    </form>
  );
}

/** The one command that sends a project its first entry. */
export function IngestCommand(props: { appUrl: string; token?: string; tokenPrefix: string; id?: string }) {
  const url = `${props.appUrl}/api/v1/logs/ingest`;
  const token = props.token ?? "$INGEST_TOKEN";
  const id = props.id ?? "ingest-command";
  return (
    <>
      <div class="secret">
        <pre class="code-sample" id={id}>
          {`curl -X POST ${url} \\\n  -H "Authorization: Bearer ${token}" \\\n  -H "Content-Type: application/json" \\\n  -d '{"message": "Hello from my app", "level": "info"}'`}
        </pre>
        <button type="button" class="secondary small" data-copy={`#${id}`} hidden>
          Copy
        </button>
      </div>
      {props.token ? null : (
        <p class="hint muted small">
          <code>$INGEST_TOKEN</code> is the project's ingest token (it starts with <code>{props.tokenPrefix}</code>), shown when the project was created or its
          token last rotated. Batches go to <code>/api/v1/logs/ingest/batch</code> as NDJSON.
        </p>
      )}
    </>
  );
}
