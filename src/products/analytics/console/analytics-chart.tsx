/** @jsxImportSource hono/jsx */
// The dashboard's time series: a bar per hour or day of the range, drawn like the console's daily
// usage chart (src/console/charts.tsx: its classes, formatNumber, a <title> summing it up, the table
// beneath for screen readers), but with the range's own wording and a tick every few bars, so 24
// hours or 31 days stay readable.
import { formatNumber } from "../../../console/charts";

export interface Point {
  /** What the table and the bar's tooltip name (`2031-01-15`, `2031-01-15 10:00 UTC`). */
  label: string;
  /** The short tick under the bar (`10h`, `01-15`). */
  tick: string;
  value: number;
}

const CHART = { width: 310, height: 96, top: 8, bottom: 16, left: 4 } as const;

export function SeriesChart(props: { id: string; caption: string; unit: string; points: readonly Point[]; tickEvery: number }) {
  const { points } = props;
  const peak = Math.max(0, ...points.map((p) => p.value));
  const total = points.reduce((sum, p) => sum + p.value, 0);
  const plot = CHART.height - CHART.top - CHART.bottom;
  const slot = (CHART.width - CHART.left) / Math.max(points.length, 1);
  const summary = peak > 0 ? `${props.caption}: ${formatNumber(total)} ${props.unit}, at most ${formatNumber(peak)} in one bar` : `${props.caption}: none yet`;
  return (
    <figure class="daily-chart">
      <figcaption>{props.caption}</figcaption>
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
            >
              <title>{`${p.label}: ${formatNumber(p.value)} ${props.unit}`}</title>
            </rect>
          );
        })}
        {points.map((p, i) =>
          i % props.tickEvery === 0 ? (
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
            Nothing in this range yet
          </text>
        )}
      </svg>
      <table class="skip">
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Time (UTC)</th>
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
