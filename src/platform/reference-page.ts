// The interactive API reference at /api/v1/docs (Scalar) configured for us: our title and logo, no
// AI agent, MCP or deploy buttons (the developer tools, whose toolbar carries "Deploy", are off),
// no fonts from another origin, no telemetry, and the document's tags in the order a newcomer
// walks them, the operator's last. The script is the Worker's own static asset, so the page works
// offline.
import { Scalar } from "@scalar/hono-api-reference";

export const REFERENCE_TITLE = "Edge Platform API reference";

/** The document's tags in reading order, each with the line the reference shows above its group. */
export const DOCUMENT_TAGS = [
  { name: "Usage", description: "This month's usage per metered service, and the plan's limits." },
  {
    name: "API keys",
    description: "The team's own keys (`keys:read`, `keys:write`): list, create with chosen scopes, revoke. The console's keys page uses the same service.",
  },
  { name: "Request log", description: "The requests made with the team's keys in the last 7 days, newest first, with our error bodies." },
  { name: "Surveys", description: "Build surveys from sections and questions, activate, close, duplicate; results and webhooks." },
  { name: "Surveys (public)", description: "The respondent's flow: no credential, counted per client IP." },
  { name: "Audit", description: "Findings, the live summary, exports to R2, shares and revocation (the audit envelope)." },
  { name: "Audit (public viewer)", description: "The signed share link and the 5-minute download it mints." },
  { name: "Logs", description: "Log projects with their ingest tokens, streams, search and the live tail." },
  { name: "Logs alerts", description: "Threshold alerts per project, checked every minute." },
  { name: "Logs ingest", description: "Single and NDJSON batch ingest, authenticated with a project's ingest token (not a team key)." },
  { name: "Push", description: "Web push apps with VAPID keys, subscribers and notifications." },
  { name: "Webhook relay", description: "Sources (public ingest addresses), destinations, stored events, replay." },
  { name: "Mail", description: "Send on the transactional or broadcast stream; read emails and their history." },
  { name: "Mail webhooks", description: "Mail event webhooks and their test delivery." },
  { name: "Mail: sending domains", description: "Domains a live key may send from, verified by a DNS TXT record." },
  {
    name: "Feature flags",
    description: "Flags, segments, environments and client keys; evaluate, bootstrap and track; the ruleset for local evaluation (team API key).",
  },
  {
    name: "Feature flags (client)",
    description: "Client keys (`fck_...`): client-side flags of one environment for browsers and apps, CORS, their own buckets.",
  },
  { name: "OFREP", description: "OpenFeature Remote Evaluation Protocol v0.3, with a client key or a team key holding flags:read." },
  { name: "Operator", description: "Teams and keys, for the platform's operator: `Authorization: Bearer <ADMIN_TOKEN>`, not a team key." },
] as const;

/**
 * A small mark in the platform's colour, inline so the page loads nothing from elsewhere (base64,
 * so the page's HTML names no other host, not even the SVG namespace).
 */
const LOGO_SVG =
  "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'><rect width='32' height='32' rx='7' fill='#e36002'/><path d='M9 9h14v3.5H13v2h8.5V18H13v2h10v3.5H9z' fill='white'/></svg>";
const LOGO_URI = `data:image/svg+xml;base64,${btoa(LOGO_SVG)}`;

/** System fonts instead of Scalar's default web fonts, and the logo above the sidebar. */
const CUSTOM_CSS = `
:root { --scalar-font: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; --scalar-font-code: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.t-doc__sidebar::before { content: ""; display: block; flex: none; height: 32px; margin: 12px 12px 0; background: url("${LOGO_URI}") no-repeat left center / 32px 32px; }
`;

/** The reference page handler for a document served at `documentUrl`. */
export function referencePage(documentUrl: string) {
  return Scalar({
    url: documentUrl,
    cdn: "/standalone.js",
    pageTitle: REFERENCE_TITLE,
    favicon: LOGO_URI,
    customCss: CUSTOM_CSS,
    withDefaultFonts: false,
    telemetry: false,
    showDeveloperTools: "never",
    agent: { disabled: true },
    mcp: { disabled: true },
    hideClientButton: false,
    documentDownloadType: "json",
    metaData: { title: REFERENCE_TITLE },
  });
}
