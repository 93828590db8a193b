// The analytics product's plain facts, in a leaf that imports nothing: where its routers mount, its
// console nav entry, its scopes, its usage service and its reference tag. index.ts re-exports them;
// the console's nav and the reference page import them from here, so no import cycle runs through
// the console page.

/** Mount prefixes: the API under /api/v1, the Plausible-compatible ingest and the tracker at the root. */
export const ANALYTICS_MOUNTS = { api: "/analytics", event: "/api/event", script: "/a" } as const;

/** The console's nav entry. */
export const analyticsNav = { path: "analytics", label: "Analytics" } as const;

/** The product's scopes (`analytics:write` includes `analytics:read`). */
export const ANALYTICS_SCOPES = ["analytics:read", "analytics:write"] as const;

/** The usage service and its metric, limited per plan in platform/plans.ts. */
export const ANALYTICS_USAGE = { service: "analytics", metric: "events" } as const;

/** The reference's tag. */
export const analyticsDocTag = {
  name: "Analytics",
  description: "Cookieless page and event counts: sites, the Plausible-compatible `POST /api/event` and tracker, a Stats API v2 subset and realtime.",
} as const;
