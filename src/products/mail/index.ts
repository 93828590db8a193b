// The mail product's definition: everything the platform serves of it, declared once
// (docs/ARCHITECTURE.md "Adding a product"). src/products/index.ts lists it.
import { mailPages } from "./console/mail";
import { defineProduct } from "../../platform/products";
import { domainsAdminRoutes } from "./domains.admin.routes";
import { domainsRouter } from "./domains.routes";
import { mailAdminRoutes } from "./mail.admin.routes";
import { mailSendsConsumer } from "./mail.consumer";
import { mailRetentionCron, mailSweepCron } from "./mail.cron";
import { mailSendsQueue } from "./mail.messages";
import { emailsRouter, mailWebhooksRouter } from "./mail.routes";

declare module "../../platform/scopes" {
  interface ProductScopes {
    "mail:send": true;
    "mail:read": true;
  }
}
declare module "../../platform/plans" {
  interface ProductServices {
    mail: true;
  }
}

export const mail = defineProduct({
  name: "mail",
  mounts: [
    { prefix: "/api/v1/emails", router: emailsRouter },
    { prefix: "/api/v1/domains", router: domainsRouter },
    { prefix: "/api/v1/webhooks", router: mailWebhooksRouter },
  ],
  operatorRoutes: mailAdminRoutes,
  operatorTeamRoutes: domainsAdminRoutes,
  console: { pages: mailPages, nav: { path: "mail", label: "Mail" } },
  queues: [mailSendsQueue],
  consumers: [mailSendsConsumer],
  crons: [mailSweepCron],
  retention: [mailRetentionCron],
  scopes: { label: "Mail", names: ["mail:send", "mail:read"] },
  services: {
    mail: {
      metric: "emails_sent",
      label: "Mail",
      unit: "emails",
      limits: { free: 3_000, starter: 50_000, pro: 250_000, scale: 1_000_000, enterprise: null },
      visibleTo: ["mail:send", "mail:read"],
    },
  },
  tags: [
    { name: "Mail", description: "Send on the transactional or broadcast stream; read emails and their history." },
    { name: "Mail webhooks", description: "Mail event webhooks and their test delivery." },
    { name: "Mail: sending domains", description: "Domains a live key may send from, verified by a DNS TXT record." },
  ],
});
