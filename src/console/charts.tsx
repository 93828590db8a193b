/** @jsxImportSource hono/jsx */
// The console's charts, drawn as SVG on the server (no script, no library): a usage bar with the
// 80 % and 95 % marks, a time series (a bar per hour or day: usage, analytics), horizontal bars for labelled counts
// (choices), columns for distributions (ratings, scales, NPS), and a split bar for shares of a
// whole (NPS promoters, passives, detractors). Sizes are SVG attributes, never inline styles (the
// CSP allows none), and every chart is accessible: the SVG has a <title> saying what it shows, and
// the numbers are also a table that only screen readers see. Plain functions of data.
import type { Child } from "hono/jsx";
import { WARNING_THRESHOLDS } from "../platform/quota";
import { ColumnHeads } from "./pages/parts";

/** A number as people read it: thousands separated, at most two decimals; a sliver above 0 is "< 0.01", never "0". */
export function formatNumber(value: number): string {
  if (value > 0 && value < 0.01) return "< 0.01";
  return value.toLocaleString("en-US", { maximumFractionDigits: 2 });
}

/** The share of `limit` that `used` is, in whole percent (0 when unlimited; a limit of 0 is full as soon as anything is used). */
export function percentOf(used: number, limit: number | null): number {
  if (limit === null) return 0;
  if (limit <= 0) return used > 0 ? 100 : 0;
  return Math.floor((used / limit) * 100);
}

/** The tone of a share: past the last warning mark `danger`, past the first `warn`, else `ok`. */
export function toneOf(percent: number): "ok" | "warn" | "danger" {
  if (percent >= WARNING_THRESHOLDS[1]) return "danger";
  if (percent >= WARNING_THRESHOLDS[0]) return "warn";
  return "ok";
}

/** Used against a limit: a bar (capped at its end) with a mark at each warning threshold. */
export function UsageBar(props: { id: string; label: string; used: number; limit: number | null; unit: string }) {
  const { used, limit } = props;
  const percent = percentOf(used, limit);
  const filled = limit === null ? 0 : limit <= 0 ? (used > 0 ? 100 : 0) : Math.min(100, (used / limit) * 100);
  const title =
    limit === null
      ? `${props.label}: ${formatNumber(used)} ${props.unit}, no monthly limit`
      : limit <= 0
        ? `${props.label}: ${formatNumber(used)} ${props.unit}, not included in the plan`
        : `${props.label}: ${formatNumber(used)} of ${formatNumber(limit)} ${props.unit} (${percent} %)`;
  return (
    <svg
      class={`usage-bar ${toneOf(percent)}`}
      viewBox="0 0 100 10"
      preserveAspectRatio="none"
      width="100%"
      height="14"
      role="img"
      aria-labelledby={`${props.id}-title`}
    >
      <title id={`${props.id}-title`}>{title}</title>
      <rect class="track" x="0" y="0" width="100" height="10" rx="2" />
      <rect class="fill" x="0" y="0" width={filled.toFixed(2)} height="10" rx="2" />
      {WARNING_THRESHOLDS.map((mark) => (
        <line class="mark" x1={mark} x2={mark} y1="0" y2="10" vector-effect="non-scaling-stroke" />
      ))}
    </svg>
  );
}

export interface DailyPoint {
  /** `YYYY-MM-DD`. */
  day: string;
  value: number;
}

/** Every day of the UTC month `period` (`YYYY-MM`) with its value from `points` (0 where none). */
export function monthDays(period: string, points: readonly DailyPoint[]): DailyPoint[] {
  const [year, month] = period.split("-").map(Number);
  const days = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  const byDay = new Map<string, number>();
  for (const point of points) byDay.set(point.day, (byDay.get(point.day) ?? 0) + point.value);
  return Array.from({ length: days }, (_, i) => {
    const day = `${period}-${String(i + 1).padStart(2, "0")}`;
    return { day, value: byDay.get(day) ?? 0 };
  });
}

const CHART = { width: 310, height: 96, top: 8, bottom: 16, left: 4 } as const;

/** A bar of a time series. */
export interface Point {
  /** What the table and the bar's tooltip name (`2031-01-15`, `2031-01-15 10:00 UTC`). */
  label: string;
  /** The short tick under the bar (`10h`, `01-15`); none under bars without one. */
  tick?: string;
  value: number;
}

/**
 * The console's one time-series chart: a bar per point (an hour, a day), the peak written at the
 * top ("max …", never "max 0": an empty series says `empty` instead), a tick under every
 * `tickEvery`-th bar that has one, and the same numbers as a table for screen readers. `caption`
 * names the chart (shown above it unless `figcaption` is false); `summary` overrides its <title>.
 */
export function SeriesChart(props: {
  id: string;
  caption: string;
  unit: string;
  points: readonly Point[];
  tickEvery?: number;
  figcaption?: boolean;
  summary?: string;
  empty?: string;
  column?: string;
}) {
  const { points } = props;
  const every = props.tickEvery ?? 1;
  const peak = Math.max(0, ...points.map((p) => p.value));
  const total = points.reduce((sum, p) => sum + p.value, 0);
  const plot = CHART.height - CHART.top - CHART.bottom;
  const slot = (CHART.width - CHART.left) / Math.max(points.length, 1);
  const summary =
    props.summary ??
    (peak > 0 ? `${props.caption}: ${formatNumber(total)} ${props.unit}, at most ${formatNumber(peak)} in one bar` : `${props.caption}: none yet`);
  return (
    <figure class="daily-chart">
      {props.figcaption === false ? null : <figcaption>{props.caption}</figcaption>}
      <svg viewBox={`0 0 ${CHART.width} ${CHART.height}`} width="100%" role="img" aria-labelledby={`${props.id}-title`}>
        <title id={`${props.id}-title`}>{summary}</title>
        <line class="axis" x1={CHART.left} x2={CHART.width} y1={CHART.top + plot} y2={CHART.top + plot} />
        {points.map((p, i) => {
          const h = peak > 0 ? (p.value / peak) * plot : 0;
          return (
            <rect
              class="bar"
              x={(CHART.left + i * slot + slot * 0.15).toFixed(2)}
              y={(CHART.top + plot - h).toFixed(2)}
              width={(slot * 0.7).toFixed(2)}
              height={h.toFixed(2)}
              data-point={p.label}
              data-value={p.value}
            >
              <title>{`${p.label}: ${formatNumber(p.value)} ${props.unit}`}</title>
            </rect>
          );
        })}
        {points.map((p, i) =>
          p.tick !== undefined && i % every === 0 ? (
            <text class="tick" x={(CHART.left + i * slot + slot / 2).toFixed(2)} y={CHART.height - 3} text-anchor="middle">
              {p.tick}
            </text>
          ) : null,
        )}
        {peak > 0 ? (
          <text class="tick" x={CHART.width} y={CHART.top - 1} text-anchor="end">
            {`max ${formatNumber(peak)}`}
          </text>
        ) : (
          <text class="empty-note" x={CHART.width / 2} y={CHART.top + plot / 2} text-anchor="middle">
            {props.empty ?? "Nothing in this range yet"}
          </text>
        )}
      </svg>
      <table class="skip">
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">{props.column ?? "Time (UTC)"}</th>
            <th scope="col">{props.unit}</th>
          </tr>
        </thead>
        <tbody>
          {points.map((p) => (
            <tr>
              <td>{p.label}</td>
              <td>{formatNumber(p.value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

/** A bar per day of the month (usage), a day number every five days, the month's total and peak day in its title. */
export function DailyChart(props: { id: string; caption: string; unit: string; days: readonly DailyPoint[] }) {
  const { days } = props;
  const peak = Math.max(0, ...days.map((d) => d.value));
  const total = days.reduce((sum, d) => sum + d.value, 0);
  const peakDay = days.find((d) => d.value === peak && peak > 0);
  return (
    <SeriesChart
      id={props.id}
      caption={props.caption}
      unit={props.unit}
      figcaption={false}
      column="Day"
      empty="No use this month yet"
      summary={
        peakDay
          ? `${props.caption}: ${formatNumber(total)} ${props.unit} this month, at most ${formatNumber(peak)} on ${peakDay.day}`
          : `${props.caption}: nothing this month yet`
      }
      points={days.map((d, i) => ({ label: d.day, value: d.value, ...(i === 0 || (i + 1) % 5 === 0 ? { tick: String(i + 1) } : {}) }))}
    />
  );
}

export interface Datum {
  label: string;
  value: number;
  /** A CSS class of the bar (products.css): `bar` unless given. */
  tone?: string;
}

const WIDTH = 320;
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const percent = (value: number, total: number) => (total ? `${Math.round((value / total) * 100)}%` : "0%");

/** The numbers of a chart as a table for screen readers (visually hidden). */
function ChartTable(props: { caption: string; data: Datum[]; total: number }) {
  return (
    <table class="skip">
      <caption>{props.caption}</caption>
      <ColumnHeads names={["Answer", "Count", "Share"]} />
      <tbody>
        {props.data.map((d) => (
          <tr>
            <th scope="row">{d.label}</th>
            <td>{d.value}</td>
            <td>{percent(d.value, props.total)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Figure(props: { id: string; title: string; height: number; data: Datum[]; total: number; children: Child }) {
  return (
    <>
      <svg class="chart" viewBox={`0 0 ${WIDTH} ${props.height}`} role="img" aria-labelledby={`${props.id}-title`}>
        <title id={`${props.id}-title`}>{props.title}</title>
        {props.children}
      </svg>
      <ChartTable caption={props.title} data={props.data} total={props.total} />
    </>
  );
}

/** One bar per label, the label above its bar and the count and share at the right. */
export function BarChart(props: { id: string; title: string; data: Datum[] }) {
  const total = props.data.reduce((sum, d) => sum + d.value, 0);
  const max = Math.max(1, ...props.data.map((d) => d.value));
  const row = 34;
  return (
    <Figure id={props.id} title={props.title} height={props.data.length * row} data={props.data} total={total}>
      {props.data.map((d, i) => {
        const y = i * row;
        return (
          <g>
            <text x="0" y={y + 12}>
              {clip(d.label, 44)}
            </text>
            <text x={WIDTH} y={y + 12} text-anchor="end" class="axis">
              {`${d.value} · ${percent(d.value, total)}`}
            </text>
            <rect class="track" x="0" y={y + 17} width={WIDTH} height="10" rx="3" />
            <rect class={d.tone ?? "bar"} x="0" y={y + 17} width={(d.value / max) * WIDTH} height="10" rx="3" />
          </g>
        );
      })}
    </Figure>
  );
}

/** One column per value of a distribution (1–5, 0–10, a scale), the count above each column. */
export function ColumnChart(props: { id: string; title: string; data: Datum[] }) {
  const total = props.data.reduce((sum, d) => sum + d.value, 0);
  const max = Math.max(1, ...props.data.map((d) => d.value));
  const height = 150;
  const plot = height - 36;
  const slot = WIDTH / Math.max(1, props.data.length);
  const bar = Math.min(40, slot * 0.7);
  return (
    <Figure id={props.id} title={props.title} height={height} data={props.data} total={total}>
      {props.data.map((d, i) => {
        const h = (d.value / max) * (plot - 14);
        const x = i * slot + (slot - bar) / 2;
        return (
          <g>
            <rect class={d.tone ?? "bar"} x={x} y={plot - h} width={bar} height={Math.max(h, d.value ? 2 : 0)} rx="3" />
            <text x={i * slot + slot / 2} y={plot - h - 4} text-anchor="middle" class="axis">
              {String(d.value)}
            </text>
            <text x={i * slot + slot / 2} y={height - 12} text-anchor="middle">
              {clip(d.label, 8)}
            </text>
          </g>
        );
      })}
    </Figure>
  );
}

/** Parts of a whole as one stacked bar, with a legend of counts and shares. */
export function SplitBar(props: { id: string; title: string; data: Datum[] }) {
  const total = props.data.reduce((sum, d) => sum + d.value, 0);
  let x = 0;
  return (
    <>
      <Figure id={props.id} title={props.title} height={22} data={props.data} total={total}>
        <rect class="track" x="0" y="0" width={WIDTH} height="22" rx="4" />
        {props.data.map((d) => {
          const w = total ? (d.value / total) * WIDTH : 0;
          const rect = <rect class={d.tone ?? "bar"} x={x} y="0" width={w} height="22" />;
          x += w;
          return rect;
        })}
      </Figure>
      <ul class="legend" aria-hidden="true">
        {props.data.map((d) => (
          <li>
            <span class={`swatch ${d.tone ?? ""}`} />
            {`${d.label}: ${d.value} (${percent(d.value, total)})`}
          </li>
        ))}
      </ul>
    </>
  );
}
