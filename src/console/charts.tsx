/** @jsxImportSource hono/jsx */
// Charts of the console, drawn as SVG on the server (no script, no library): horizontal bars for
// labelled counts (choices), columns for distributions (ratings, scales, NPS), and a split bar for
// shares of a whole (NPS promoters, passives, detractors). Each chart is an image with a <title>
// that says what it shows, and the same numbers as a table that only screen readers see.
import type { Child } from "hono/jsx";

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
      <thead>
        <tr>
          <th scope="col">Answer</th>
          <th scope="col">Count</th>
          <th scope="col">Share</th>
        </tr>
      </thead>
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
