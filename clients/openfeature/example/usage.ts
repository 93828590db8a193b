// A runnable example of both providers (copied into a consumer project by
// scripts/check-openfeature-package.mjs, type-checked and run against a stand-in of the platform).
// EDGE_URL: the platform's address; EDGE_KEY: a team key with flags:read.
import { OpenFeature } from "@openfeature/server-sdk";
import { EdgeFlagsProvider } from "@edge-platform/openfeature/server";
import { EdgeFlagsWebProvider, type EdgeFlagsWebProviderOptions } from "@edge-platform/openfeature/web";

const provider = new EdgeFlagsProvider({
  baseUrl: process.env.EDGE_URL ?? "http://localhost:8787",
  apiKey: process.env.EDGE_KEY ?? "",
  refreshIntervalMs: 0,
});
await OpenFeature.setProviderAndWait(provider);
const flags = OpenFeature.getClient();

const checkout = await flags.getStringDetails("targeting", "none", { targetingKey: "u1", country: "FR", age: 30 });
console.log(`targeting: ${checkout.value} (${checkout.reason}, version ${checkout.flagMetadata.version})`);
const limits = await flags.getObjectValue("org-rollout", {}, { targetingKey: "k", tier: "paid", org: "globex" });
console.log(`org-rollout: ${JSON.stringify(limits)}`);
const missing = await flags.getBooleanDetails("nope", false, { targetingKey: "u1" });
console.log(`nope: ${missing.value} (${missing.errorCode})`);
console.log(`changed since: ${await provider.refresh()}, fetched ${provider.stats.fetched}, not modified ${provider.stats.notModified}`);
await OpenFeature.close();

// The web provider's options, as a browser app would write them.
const webOptions: EdgeFlagsWebProviderOptions = { baseUrl: "https://edge.example.com", clientKey: "fck_example", trackExposures: true };
export const web = new EdgeFlagsWebProvider(webOptions);
// A wrong use the types refuse (never called):
// @ts-expect-error the server provider needs a team key
export const wrong = () => new EdgeFlagsProvider({ baseUrl: "https://edge.example.com" });
