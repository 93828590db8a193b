// The audit product's definition: everything the platform serves of it, declared once
// (docs/ARCHITECTURE.md "Adding a product"). src/products/index.ts lists it.
import { auditPages } from "./console/audit";
import { defineProduct } from "../../platform/products";
import { auditScansConsumer } from "./audit-scan.consumer";
import { auditScanRetentionCron, auditScanSchedulesCron, auditScanSweepCron } from "./audit-scan.cron";
import { scansQueue } from "./audit-scan.messages";
import { auditViewerRouter } from "./audit-viewer.routes";
import { reportExportConsumer } from "./audit.consumer";
import { auditExportSweepCron, auditRiskSeriesCron } from "./audit.cron";
import { exportQueue } from "./audit.messages";
import { auditRouter } from "./audit.routes";

declare module "../../platform/scopes" {
  interface ProductScopes {
    "audit:read": true;
    "audit:write": true;
  }
}
declare module "../../platform/plans" {
  interface ProductServices {
    ai: true;
  }
}
declare module "../../platform/rate-limit/buckets" {
  interface ProductStrictFamilies {
    /** Report shares and scan runs (one counter, as the specification says). */
    audit_share: true;
  }
}

export const audit = defineProduct({
  name: "audit",
  mounts: [
    { prefix: "/api/v1/orgs", router: auditRouter },
    { prefix: "/insights/audit/reports", router: auditViewerRouter },
  ],
  console: { pages: auditPages, nav: { path: "audit", label: "Audit" } },
  queues: [exportQueue, scansQueue],
  consumers: [reportExportConsumer, auditScansConsumer],
  crons: [auditExportSweepCron, auditRiskSeriesCron, auditScanSweepCron, auditScanSchedulesCron],
  retention: [auditScanRetentionCron],
  scopes: { label: "Audit", names: ["audit:read", "audit:write"] },
  services: {
    ai: {
      metric: "ai_units",
      label: "AI (audit)",
      unit: "AI units",
      limits: { free: 10, starter: 100, pro: 500, scale: 2_500, enterprise: null },
      visibleTo: ["audit:read", "audit:write"],
    },
  },
  rateLimits: { strictFamilies: ["audit_share"] },
  tags: [
    { name: "Audit", description: "Findings, the live summary, exports to R2, shares and revocation (the audit envelope)." },
    { name: "Audit (public viewer)", description: "The signed share link and the 5-minute download it mints." },
  ],
});
