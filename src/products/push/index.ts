// The push product's definition: everything the platform serves of it, declared once
// (docs/ARCHITECTURE.md "Adding a product"). src/products/index.ts lists it.
import { pushPages } from "./console/push";
import { defineProduct } from "../../platform/products";
import { pushAdminRoutes } from "./push.admin.routes";
import { pushSendsConsumer } from "./push.consumer";
import { pushRetentionCron, pushSweepCron } from "./push.cron";
import { pushSendsQueue } from "./push.messages";
import { pushRouter } from "./push.routes";
import { PushStore } from "./store/push-store";

export { PushStore };

declare module "../../platform/scopes" {
  interface ProductScopes {
    "push:read": true;
    "push:write": true;
  }
}
declare module "../../platform/plans" {
  interface ProductServices {
    push: true;
  }
}
declare module "../../platform/rate-limit/buckets" {
  interface ProductStrictFamilies {
    push_subscribers: true;
  }
}

export const push = defineProduct({
  name: "push",
  mounts: [{ prefix: "/api/v1/push", router: pushRouter }],
  operatorRoutes: pushAdminRoutes,
  console: { pages: pushPages, nav: { path: "push", label: "Push" } },
  queues: [pushSendsQueue],
  consumers: [pushSendsConsumer],
  crons: [pushSweepCron],
  retention: [pushRetentionCron],
  durableObjects: { PushStore },
  scopes: { label: "Push", names: ["push:read", "push:write"] },
  services: {
    push: {
      metric: "notifications_sent",
      label: "Push notifications",
      unit: "notifications",
      limits: { free: 10_000, starter: 100_000, pro: 1_000_000, scale: 10_000_000, enterprise: null },
      visibleTo: ["push:read", "push:write"],
    },
  },
  rateLimits: { strictFamilies: ["push_subscribers"] },
  tags: [{ name: "Push", description: "Web push apps with VAPID keys, subscribers and notifications." }],
});
