// The analytics product's definition: what registering it takes (its routers and where they are
// mounted, its Durable Object classes and their bindings, its console page and nav entry, its scopes,
// its usage service and its reference tag). Retention runs in each store's alarm: no cron, no queue.
export { analyticsEventRouter, analyticsRouter, analyticsScriptRouter } from "./analytics.routes";
export { AnalyticsStore } from "./store/analytics-store";
export { AnalyticsSaltStore } from "./store/analytics-salt";
export { analyticsPages } from "./console/analytics.page";

export { ANALYTICS_MOUNTS, ANALYTICS_SCOPES, ANALYTICS_USAGE, analyticsDocTag, analyticsNav } from "./analytics.product";
