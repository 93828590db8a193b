// The feature flags product's definition: everything the platform serves of it, declared once
// (docs/ARCHITECTURE.md "Adding a product"); src/products/index.ts lists it. Scheduled changes run
// in each team's store's alarm: no cron, no queue.
import { defineProduct } from "../../platform/products";
import { FLAGS_NAV, flagsPages } from "./console/flags-pages";
import { flagsClientRouter } from "./flags-client.routes";
import { flagsRouter } from "./flags.routes";
import { ofrepRouter } from "./ofrep.routes";
import { FlagStore } from "./store/flag-store";

export { FlagStore };

declare module "../../platform/scopes" {
  interface ProductScopes {
    "flags:read": true;
    "flags:write": true;
  }
}
declare module "../../platform/plans" {
  interface ProductServices {
    flags: true;
  }
}
declare module "../../platform/rate-limit/buckets" {
  interface ProductBuckets {
    flags_client_ip: true;
    flags_client: true;
  }
  interface ProductStrictFamilies {
    flags: true;
  }
}

export const flags = defineProduct({
  name: "flags",
  mounts: [
    // The client API has its own credential (a client key) and buckets; the app mounts it before /flags (longer prefix first).
    { prefix: "/api/v1/flags/client", router: flagsClientRouter },
    { prefix: "/api/v1/flags", router: flagsRouter },
    { prefix: "/ofrep/v1", router: ofrepRouter },
  ],
  console: { pages: flagsPages, nav: FLAGS_NAV },
  durableObjects: { FlagStore },
  scopes: { label: "Feature flags", names: ["flags:read", "flags:write"], implied: { "flags:write": ["flags:read"] } },
  services: {
    flags: {
      metric: "evaluations",
      label: "Flag evaluations",
      unit: "evaluations",
      limits: { free: 100_000, starter: 1_000_000, pro: 10_000_000, scale: 100_000_000, enterprise: null },
      visibleTo: ["flags:read", "flags:write"],
    },
  },
  rateLimits: {
    buckets: {
      /** The specification's per-IP bucket of the flags client endpoints (`/flags/client/...`), counted before `flags_client`. */
      flags_client_ip: 120,
      /** Keyed on a flags client key, at the plan's API rate like `default`. */
      flags_client: "plan",
    },
    // Evaluate, bootstrap, track and OFREP with a team key: one strict counter of the team.
    strictFamilies: ["flags"],
  },
  tags: [
    {
      name: "Feature flags",
      description: "Flags, segments, environments and client keys; evaluate, bootstrap and track; the ruleset for local evaluation (team API key).",
    },
    {
      name: "Feature flags (client)",
      description: "Client keys (`fck_...`): client-side flags of one environment for browsers and apps, CORS, their own buckets.",
    },
    { name: "OFREP", description: "OpenFeature Remote Evaluation Protocol v0.3, with a client key or a team key holding flags:read." },
  ],
});
