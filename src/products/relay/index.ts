// The webhook relay's definition: everything the platform serves of it, declared once
// (docs/ARCHITECTURE.md "Adding a product"). src/products/index.ts lists it.
import { relayPages } from "./console/relay";
import { defineProduct } from "../../platform/products";
import { relayAdminRoutes } from "./relay.admin.routes";
import { webhookDeliveriesConsumer } from "./relay.consumer";
import { webhookDeliveriesQueue } from "./relay.messages";
import { ingestRouter, relayRouter } from "./relay.routes";
import { RelayStore } from "./store/relay-store";

export { RelayStore };

declare module "../../platform/scopes" {
  interface ProductScopes {
    "webhooks:read": true;
    "webhooks:write": true;
  }
}
declare module "../../platform/plans" {
  interface ProductServices {
    webhooks: true;
  }
}

export const relay = defineProduct({
  name: "relay",
  mounts: [
    // More specific than mail's /api/v1/webhooks, so mounted before it: the relay owns everything under /webhooks/sources.
    { prefix: "/api/v1/webhooks/sources", router: relayRouter },
    { prefix: "/in", router: ingestRouter },
  ],
  operatorRoutes: relayAdminRoutes,
  console: { pages: relayPages, nav: { path: "relay", label: "Webhook relay" } },
  queues: [webhookDeliveriesQueue],
  consumers: [webhookDeliveriesConsumer],
  durableObjects: { RelayStore },
  scopes: { label: "Webhook relay", names: ["webhooks:read", "webhooks:write"], implied: { "webhooks:write": ["webhooks:read"] } },
  services: {
    webhooks: {
      metric: "events_received",
      label: "Webhook relay",
      unit: "events",
      limits: { free: 10_000, starter: 100_000, pro: 1_000_000, scale: 10_000_000, enterprise: null },
      visibleTo: ["webhooks:read"],
    },
  },
  tags: [{ name: "Webhook relay", description: "Sources (public ingest addresses), destinations, stored events, replay." }],
});
