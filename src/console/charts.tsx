/** @jsxImportSource hono/jsx */
// The console's charts, drawn as SVG on the server: a usage bar with the 80 % and 95 % marks and
// a daily bar chart. Sizes are SVG attributes, never inline styles (the CSP allows none), and
// every chart is accessible: the SVG has a <title> saying what it shows, and the numbers are also
// a table for screen readers (visually hidden, `skip`). Plain functions of data.
import { WARNING_THRESHOLDS } from "../platform/quota";

/** A number as people read it: thousands separated, at most two decimals. */
export function formatNumber(value: number): string {
  return value.toLocaleString("en-US", { maximumFractionDigits: 2 });
}

/** The share of `limit` that `used` is, in whole percent (0 when unlimited). */
export function percentOf(used: number, limit: number | null): number {
  if (limit === null || limit <= 0) return 0;
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
  const filled = limit === null ? 0 : Math.min(100, (used / Math.max(limit, 1)) * 100);
  const title =
    limit === null ? `${props.label}: ${formatNumber(used)} ${props.unit}, no monthly limit` : `${props.label}: ${formatNumber(used)} of ${formatNumber(limit)} ${props.unit} (${percent} %)`;
  return (
    <svg class={`usage-bar ${toneOf(percent)}`} viewBox="0 0 100 10" preserveAspectRatio="none" width="100%" height="14" role="img" aria-labelledby={`${props.id}-title`}>
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

/**
 * A bar per day of the month, with the peak written at the top and a day number every five days;
 * the table beneath says the same for screen readers. `caption` names the chart (its <title>).
 */
export function DailyChart(props: { id: string; caption: string; unit: string; days: readonly DailyPoint[] }) {
  const { days } = props;
  const peak = Math.max(0, ...days.map((d) => d.value));
  const total = days.reduce((sum, d) => sum + d.value, 0);
  const plot = CHART.height - CHART.top - CHART.bottom;
  const slot = (CHART.width - CHART.left) / Math.max(days.length, 1);
  const peakDay = days.find((d) => d.value === peak && peak > 0);
  const summary = peakDay
    ? `${props.caption}: ${formatNumber(total)} ${props.unit} this month, at most ${formatNumber(peak)} on ${peakDay.day}`
    : `${props.caption}: nothing this month yet`;
  return (
    <figure class="daily-chart">
      <svg viewBox={`0 0 ${CHART.width} ${CHART.height}`} width="100%" role="img" aria-labelledby={`${props.id}-title`}>
        <title id={`${props.id}-title`}>{summary}</title>
        <line class="axis" x1={CHART.left} x2={CHART.width} y1={CHART.top + plot} y2={CHART.top + plot} />
        {days.map((d, i) => {
          const h = peak > 0 ? (d.value / peak) * plot : 0;
          return (
            <rect class="bar" x={(CHART.left + i * slot + slot * 0.15).toFixed(2)} y={(CHART.top + plot - h).toFixed(2)} width={(slot * 0.7).toFixed(2)} height={h.toFixed(2)} data-day={d.day} data-value={d.value}>
              <title>{`${d.day}: ${formatNumber(d.value)} ${props.unit}`}</title>
            </rect>
          );
        })}
        {days.map((d, i) =>
          i === 0 || (i + 1) % 5 === 0 ? (
            <text class="tick" x={(CHART.left + i * slot + slot / 2).toFixed(2)} y={CHART.height - 3} text-anchor="middle">
              {String(i + 1)}
            </text>
          ) : null,
        )}
        {peak > 0 ? (
          <text class="tick" x={CHART.width} y={CHART.top - 1} text-anchor="end">
            {`max ${formatNumber(peak)}`}
          </text>
        ) : (
          <text class="empty-note" x={CHART.width / 2} y={CHART.top + plot / 2} text-anchor="middle">
            No use this month yet
          </text>
        )}
      </svg>
      <table class="skip">
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">{props.unit}</th>
          </tr>
        </thead>
        <tbody>
          {days.map((d) => (
            <tr>
              <td>{d.day}</td>
              <td>{formatNumber(d.value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
