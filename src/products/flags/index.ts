// The feature flags product: what registering it needs (NAMED-PRODUCTS.md "Feature flags"). Until
// the product registry (src/products/index.ts) lands, src/app.ts, src/index.ts and the console
// import these by name.
export { FlagStore } from "./store/flag-store";
export { flagsRouter } from "./flags.routes";
export { flagsClientRouter } from "./flags-client.routes";
export { ofrepRouter } from "./ofrep.routes";

/** The scopes the product adds (each `:write` includes its `:read`; platform/scopes.ts). */
export const FLAG_SCOPES = ["flags:read", "flags:write"] as const;

/** The reference's section of the product. */
export const FLAGS_DOCUMENT_TAGS = [
  {
    name: "Feature flags",
    description:
      "Flags with targeting rules, segments and percentage rollouts per environment, evaluated at the edge from a ruleset cached in each isolate; versions, history, revert and scheduled changes; client keys. Team API key.",
  },
] as const;
