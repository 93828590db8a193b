// The analytics product's definition: everything the platform serves of it, declared once
// (docs/ARCHITECTURE.md "Adding a product"); src/products/index.ts lists it. Retention runs in each
// store's alarm: no cron, no queue.
import { defineProduct } from "../../platform/products";
import { analyticsEventRouter, analyticsRouter, analyticsScriptRouter } from "./analytics.routes";
import { analyticsPages } from "./console/analytics.page";
import { AnalyticsSaltStore } from "./store/analytics-salt";
import { AnalyticsStore } from "./store/analytics-store";

export { AnalyticsSaltStore, AnalyticsStore };

declare module "../../platform/scopes" {
  interface ProductScopes {
    "analytics:read": true;
    "analytics:write": true;
  }
}
declare module "../../platform/plans" {
  interface ProductServices {
    analytics: true;
  }
}

export const analytics = defineProduct({
  name: "analytics",
  mounts: [
    { prefix: "/api/v1/analytics", router: analyticsRouter },
    // The Plausible-compatible ingest and the tracker, at the root as Plausible serves them.
    { prefix: "/api/event", router: analyticsEventRouter },
    { prefix: "/a", router: analyticsScriptRouter },
  ],
  console: { pages: analyticsPages, nav: { path: "analytics", label: "Analytics" } },
  durableObjects: { AnalyticsStore, AnalyticsSaltStore },
  scopes: { label: "Analytics", names: ["analytics:read", "analytics:write"], implied: { "analytics:write": ["analytics:read"] } },
  services: {
    analytics: {
      metric: "events",
      label: "Analytics",
      unit: "events",
      limits: { free: 10_000, starter: 100_000, pro: 1_000_000, scale: 10_000_000, enterprise: null },
      visibleTo: ["analytics:read", "analytics:write"],
    },
  },
  tags: [
    {
      name: "Analytics",
      description: "Cookieless page and event counts: sites, the Plausible-compatible `POST /api/event` and tracker, a Stats API v2 subset and realtime.",
    },
  ],
});
