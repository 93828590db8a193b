// The console's navigation: one entry per page group, in the order the sidebar shows them: the
// platform's (keys, usage, requests), each product's (its definition's `console.nav`, in list
// order), then members.
import type { Role } from "../db/schema";
import { catalog } from "../platform/products";

export interface NavEntry {
  /** The path under /console/teams/:team_id/ (its first segment marks the entry active). */
  path: string;
  label: string;
  /** Shown only to these roles and above (default: every member). */
  least?: Role;
}

const FIRST: readonly NavEntry[] = [
  { path: "keys", label: "API keys" },
  { path: "usage", label: "Usage" },
  { path: "requests", label: "Requests" },
];
const LAST: readonly NavEntry[] = [{ path: "members", label: "Members" }];

/** The sidebar's entries for the registered products. */
export function navEntries(): readonly NavEntry[] {
  const products = catalog().products.flatMap((product) => (product.console?.nav ? [product.console.nav] : []));
  return [...FIRST, ...products, ...LAST];
}
