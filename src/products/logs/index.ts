// The logs product's definition: everything the platform serves of it, declared once
// (docs/ARCHITECTURE.md "Adding a product"). src/products/index.ts lists it.
import { logsPages } from "./console/logs";
import { defineProduct } from "../../platform/products";
import { alertChecksCron } from "./log-alerts.cron";
import { logsAdminRoutes } from "./logs.admin.routes";
import { alertChecksConsumer, alertNotificationsConsumer } from "./logs.consumer";
import { logsRetentionCron } from "./logs.cron";
import { alertChecksQueue, alertNotificationsQueue } from "./logs.messages";
import { logsIngestRouter, logsRouter } from "./logs.routes";
import { LogStore } from "./store/log-store";

export { LogStore };

declare module "../../platform/scopes" {
  interface ProductScopes {
    "logs:read": true;
    "logs:write": true;
  }
}
declare module "../../platform/plans" {
  interface ProductServices {
    logs: true;
  }
}
declare module "../../platform/rate-limit/buckets" {
  interface ProductBuckets {
    log_ingest: true;
  }
}

export const logs = defineProduct({
  name: "logs",
  mounts: [
    { prefix: "/api/v1/logs/ingest", router: logsIngestRouter },
    { prefix: "/api/v1/logs", router: logsRouter },
  ],
  operatorRoutes: logsAdminRoutes,
  console: { pages: logsPages, nav: { path: "logs", label: "Logs" } },
  queues: [alertNotificationsQueue, alertChecksQueue],
  consumers: [alertNotificationsConsumer, alertChecksConsumer],
  crons: [alertChecksCron],
  retention: [logsRetentionCron],
  durableObjects: { LogStore },
  scopes: { label: "Logs", names: ["logs:read", "logs:write"] },
  services: {
    logs: {
      metric: "ingested_mb",
      label: "Log ingest",
      unit: "MB",
      limits: { free: 1_024, starter: 10_240, pro: 51_200, scale: 512_000, enterprise: null },
      visibleTo: ["logs:read", "logs:write"],
    },
  },
  // Ingest is authenticated with a project's token, counted per token (not the team's default bucket).
  rateLimits: { buckets: { log_ingest: 300 } },
  tags: [
    { name: "Logs", description: "Log projects with their ingest tokens, streams, search and the live tail." },
    { name: "Logs alerts", description: "Threshold alerts per project, checked every minute." },
    { name: "Logs ingest", description: "Single and NDJSON batch ingest, authenticated with a project's ingest token (not a team key)." },
  ],
});
