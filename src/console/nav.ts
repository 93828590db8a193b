// The console's navigation: one entry per page group, in the order the sidebar shows them. A page
// group adds its entry here (one line) and its routes to src/console/pages/index.ts.
import type { Role } from "../db/schema";
import { analyticsNav } from "../products/analytics/analytics.product";

export interface NavEntry {
  /** The path under /console/teams/:team_id/ (its first segment marks the entry active). */
  path: string;
  label: string;
  /** Shown only to these roles and above (default: every member). */
  least?: Role;
}

export const NAV: readonly NavEntry[] = [
  { path: "keys", label: "API keys" },
  { path: "usage", label: "Usage" },
  { path: "requests", label: "Requests" },
  { path: "logs", label: "Logs" },
  { path: "relay", label: "Webhook relay" },
  { path: "surveys", label: "Surveys" },
  { path: "mail", label: "Mail" },
  { path: "push", label: "Push" },
  { path: "audit", label: "Audit" },
  analyticsNav,
  { path: "members", label: "Members" },
];
