// Renders a report record and its snapshot into the three artefact formats. Pure functions: the
// same record always gives the same bytes, so a re-render after a crash writes the same object.
import type { ReportFormat, ReportStatus, ReportSummary } from "../../db/schema/audit";
import { csvRow } from "../../platform/csv";
import { escapeHtml, htmlPage } from "../../platform/html";

/** The record fields an artefact carries (the API view of a report). */
export interface ReportView {
  id: string;
  org_id: string;
  project_id: string;
  period_start: string;
  period_end: string;
  format: ReportFormat;
  status: ReportStatus;
  snapshot: ReportSummary;
  exported_at: string | null;
  shared_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface Artefact {
  body: string;
  contentType: string;
  extension: string;
}

export function renderArtefact(report: ReportView): Artefact {
  switch (report.format) {
    case "json":
      return { body: JSON.stringify({ report }, null, 2) + "\n", contentType: "application/json; charset=utf-8", extension: "json" };
    case "csv":
      return { body: renderCsv(report), contentType: "text/csv; charset=utf-8", extension: "csv" };
    case "pdf":
      return { body: renderHtml(report), contentType: "text/html; charset=utf-8", extension: "html" };
  }
}

export const CSV_HEADER = "report_id,project_id,period_start,period_end,date,open_risk_score,verification_pass_rate,regression_rate,open_findings";

/** One row per burn-down day; the rates and open findings repeat on each row. */
export function renderCsv(report: ReportView): string {
  const s = report.snapshot;
  const rows = s.risk_burn_down.map((day) =>
    csvRow([
      report.id,
      report.project_id,
      report.period_start,
      report.period_end,
      day.date,
      day.open_risk_score,
      s.verification_pass_rate,
      s.regression_rate,
      s.open_findings,
    ]),
  );
  return `${CSV_HEADER}\r\n${rows.join("")}`;
}

function percent(rate: number): string {
  return `${(Math.round(rate * 1000) / 10).toFixed(1)}%`;
}

function score(value: number): string {
  return String(Math.round(value * 100) / 100);
}

/** A bar chart of the burn-down as inline SVG (no script, no external resource). */
export function burnDownSvg(points: ReportSummary["risk_burn_down"]): string {
  const width = 560;
  const height = 240;
  const left = 48;
  const bottom = 36;
  const top = 16;
  const plotHeight = height - bottom - top;
  const max = Math.max(1, ...points.map((p) => p.open_risk_score));
  const slot = (width - left - 8) / Math.max(1, points.length);
  const bars = points
    .map((p, i) => {
      const h = (p.open_risk_score / max) * plotHeight;
      const x = left + i * slot + slot * 0.15;
      const y = top + plotHeight - h;
      const label = escapeHtml(p.date.slice(5));
      return (
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" height="${h.toFixed(1)}" fill="#c2410c"><title>${escapeHtml(p.date)}: ${score(p.open_risk_score)}</title></rect>` +
        `<text x="${(x + slot * 0.35).toFixed(1)}" y="${(y - 4).toFixed(1)}" font-size="11" text-anchor="middle" fill="#1f2937">${score(p.open_risk_score)}</text>` +
        `<text x="${(x + slot * 0.35).toFixed(1)}" y="${height - bottom + 16}" font-size="11" text-anchor="middle" fill="#4b5563">${label}</text>`
      );
    })
    .join("");
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="Open risk score over the last 7 days">` +
    `<line x1="${left}" y1="${top + plotHeight}" x2="${width - 8}" y2="${top + plotHeight}" stroke="#9ca3af"/>` +
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotHeight}" stroke="#9ca3af"/>` +
    `<text x="${left - 6}" y="${top + 4}" font-size="11" text-anchor="end" fill="#4b5563">${score(max)}</text>` +
    `<text x="${left - 6}" y="${top + plotHeight}" font-size="11" text-anchor="end" fill="#4b5563">0</text>` +
    bars +
    `</svg>`
  );
}

export interface HtmlOptions {
  /** A download link to show (the public viewer's 5-minute link). */
  downloadUrl?: string;
  /** Heading line above the title. */
  context?: string;
}

/** The human-readable report: metrics, the burn-down chart and its table, self-contained. */
export function renderHtml(report: ReportView, options: HtmlOptions = {}): string {
  const s = report.snapshot;
  const rows = s.risk_burn_down.map((d) => `<tr><td>${escapeHtml(d.date)}</td><td class="n">${score(d.open_risk_score)}</td></tr>`).join("");
  const download = options.downloadUrl
    ? `<p><a class="button" href="${escapeHtml(options.downloadUrl)}" rel="noopener">Download the ${escapeHtml(report.format === "pdf" ? "html" : report.format)} artefact</a> <small>(link valid 5 minutes)</small></p>`
    : "";
  const title = `Audit report ${report.project_id} ${report.period_start} to ${report.period_end}`;
  const body = `<p class="context">${escapeHtml(options.context ?? "Audit report")}</p>
<h1>Project ${escapeHtml(report.project_id)}: ${escapeHtml(report.period_start)} to ${escapeHtml(report.period_end)}</h1>
<section class="metrics">
<div class="metric"><b>${s.open_findings}</b><span>Open findings</span></div>
<div class="metric"><b>${score(s.risk_burn_down[s.risk_burn_down.length - 1]?.open_risk_score ?? 0)}</b><span>Open risk score today</span></div>
<div class="metric"><b>${percent(s.verification_pass_rate)}</b><span>Verification pass rate</span></div>
<div class="metric"><b>${percent(s.regression_rate)}</b><span>Regression rate</span></div>
</section>
<h2>Risk burn-down (last 7 days)</h2>
${burnDownSvg(s.risk_burn_down)}
<table><thead><tr><th>Date (UTC)</th><th class="n">Open risk score</th></tr></thead><tbody>${rows}</tbody></table>
${download}
<footer>Report ${escapeHtml(report.id)} · snapshot taken ${escapeHtml(report.created_at)}${report.exported_at ? ` · exported ${escapeHtml(report.exported_at)}` : ""}</footer>`;
  return `${htmlPage({ title, style: REPORT_STYLE, body })}\n`;
}

const REPORT_STYLE = `
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#111827;max-width:760px;margin:2rem auto;padding:0 1rem;line-height:1.5}
h1{font-size:1.5rem;margin:.25rem 0 1rem}.context{color:#6b7280;font-size:.9rem}
.metrics{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:.75rem;margin:1rem 0}
.metric{border:1px solid #e5e7eb;border-radius:8px;padding:.75rem}.metric b{display:block;font-size:1.6rem}
.metric span{color:#6b7280;font-size:.85rem}table{border-collapse:collapse;width:100%;margin-top:1rem}
td,th{border-bottom:1px solid #e5e7eb;padding:.35rem .5rem;text-align:left}.n{text-align:right}
.button{display:inline-block;background:#1d4ed8;color:#fff;padding:.5rem .9rem;border-radius:6px;text-decoration:none}
footer{color:#6b7280;font-size:.8rem;margin-top:2rem}
`;

/** The page the public viewer answers for an unknown, expired, tampered or revoked link. */
export function notFoundHtml(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>Report not available</title>
<style>body{font-family:system-ui,sans-serif;max-width:560px;margin:4rem auto;padding:0 1rem;color:#111827}</style></head>
<body><h1>Report not available</h1><p>This link is invalid, has expired, or the report is no longer shared. Ask the sender for a new link.</p></body></html>
`;
}
