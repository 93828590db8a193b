// Feature flags through OpenFeature, over real HTTP against the running server (suite `flags`):
// a flag with rules, a segment and rollouts made through the API; the package's server provider
// (clients/openfeature, built here) evaluates locally from the ruleset and gives the values,
// variants, reasons and versions of `POST /flags/evaluate` for several contexts; a change reaches
// it on refresh (one 200, then 304s, counted); OpenFeature's own OFREP provider
// (@openfeature/ofrep-provider with @openfeature/server-sdk) against /ofrep/v1 gives the same
// answers with the team key and with a client key, and FLAG_NOT_FOUND and TARGETING_KEY_MISSING
// arrive as OpenFeature's error codes; the package's web provider (@openfeature/web-sdk in Node)
// bootstraps with a client key, follows a context change, revalidates with a 304 and its exposures
// reach the flag's insights.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildPackage, DIST } from "../../clients/openfeature/build.mjs";
import { assert, eventually, expectStatus, need, request } from "./http.mjs";

const CONTEXTS = [
  { targetingKey: "u-fr", country: "FR" },
  { targetingKey: "u-beta", country: "US" },
  { targetingKey: "user-1", plan: "pro" },
  { targetingKey: "user-2", country: "JP", app_version: "2.4.0" },
  { targetingKey: "user-3", country: "US", plan: "free" },
];
const TYPES = { checkout: "string", "dark-mode": "boolean", limits: "json" };

/** The answer of a provider through an OpenFeature client, in the shape of /flags/evaluate's entries. */
async function viaClient(client, flag, context) {
  const type = TYPES[flag];
  const details =
    type === "boolean"
      ? await client.getBooleanDetails(flag, false, context)
      : type === "json"
        ? await client.getObjectDetails(flag, {}, context)
        : await client.getStringDetails(flag, "default", context);
  if (details.errorCode) return { errorCode: details.errorCode };
  return { value: details.value, variant: details.variant, reason: details.reason, version: details.flagMetadata?.version };
}

export async function flagsChecks({ url, createTeamWithKey }) {
  await buildPackage({ types: false });
  const { EdgeFlagsProvider } = await import(pathToFileURL(join(DIST, "server.js")).href);
  const { EdgeFlagsWebProvider } = await import(pathToFileURL(join(DIST, "web.js")).href);
  const { OpenFeature, ProviderEvents } = await import("@openfeature/server-sdk");
  const { OFREPProvider } = await import("@openfeature/ofrep-provider");
  const web = await import("@openfeature/web-sdk");

  // Enterprise: no monthly cap on evaluations. The strict `flags` family (30 a minute) is shared by
  // /flags/evaluate and team-key OFREP: this suite makes 24 such calls.
  const team = await createTeamWithKey({ name: "Flags shop", plan: "enterprise", domains: [] });
  const key = team.key;
  const api = (method, path, body) => request(url, method, `/api/v1/${path}`, { key, body });
  const state = {};

  expectStatus(await api("POST", "flags/segments", { key: "beta-testers", name: "Beta testers", included: ["u-beta"] }), 201, "segment");
  expectStatus(
    await api("POST", "flags", {
      key: "checkout",
      type: "string",
      variants: { classic: "classic", new: "new", beta: "beta" },
      off_variant: "classic",
      client_side: true,
      environments: {
        production: {
          enabled: true,
          rules: [
            { id: "eu", clauses: [{ attribute: "country", op: "in", values: ["FR", "DE"] }], serve: { variant: "new" } },
            { id: "beta", clauses: [{ attribute: "key", op: "in_segment", values: ["beta-testers"] }], serve: { variant: "beta" } },
          ],
          fallthrough: {
            rollout: {
              variations: [
                { variant: "classic", weight: 50_000 },
                { variant: "new", weight: 50_000 },
              ],
            },
          },
        },
      },
    }),
    201,
    "flag checkout",
  );
  expectStatus(
    await api("POST", "flags", {
      key: "dark-mode",
      client_side: true,
      environments: {
        production: {
          enabled: true,
          rules: [{ id: "new-app", clauses: [{ attribute: "app_version", op: "semver_gt", values: ["2.0.0"] }], serve: { variant: "on" } }],
          fallthrough: {
            rollout: {
              variations: [
                { variant: "on", weight: 30_000 },
                { variant: "off", weight: 70_000 },
              ],
            },
          },
        },
      },
    }),
    201,
    "flag dark-mode",
  );
  expectStatus(
    await api("POST", "flags", {
      key: "limits",
      type: "json",
      variants: { small: { seats: 3 }, large: { seats: 50 } },
      off_variant: "small",
      environments: {
        production: {
          enabled: true,
          rules: [{ id: "pro", clauses: [{ attribute: "plan", op: "in", values: ["pro"] }], serve: { variant: "large" } }],
          fallthrough: { variant: "small" },
        },
      },
    }),
    201,
    "flag limits",
  );

  /** The server's own answers (POST /flags/evaluate), by context index then flag. */
  const serverAnswers = async (contexts) => {
    const out = [];
    for (const context of contexts) {
      const res = expectStatus(await api("POST", "flags/evaluate", { environment: "production", context }), 200, "evaluate");
      out.push(
        Object.fromEntries(
          Object.entries(res.body.data.flags).map(([flag, e]) => [flag, { value: e.value, variant: e.variant, reason: e.reason, version: e.version }]),
        ),
      );
    }
    return out;
  };

  const clientKey = expectStatus(await api("POST", "flags/environments/production/client-keys", { name: "e2e web" }), 201, "client key").body.data.key;
  const provider = new EdgeFlagsProvider({ baseUrl: url, apiKey: key, refreshIntervalMs: 0 });
  await OpenFeature.setProviderAndWait("local", provider);
  const local = OpenFeature.getClient("local");
  const ofrepTeam = new OFREPProvider({ baseUrl: url, headers: [["Authorization", `Bearer ${key}`]] });
  await OpenFeature.setProviderAndWait("ofrep-team", ofrepTeam);
  const ofrepClient = new OFREPProvider({ baseUrl: url, headers: [["Authorization", `Bearer ${clientKey}`]] });
  await OpenFeature.setProviderAndWait("ofrep-client", ofrepClient);

  return {
    "flags: the server provider evaluates locally what POST /flags/evaluate answers, for every flag and context": async () => {
      const expected = await serverAnswers(CONTEXTS);
      state.expected = expected;
      const variants = new Set();
      for (const [i, context] of CONTEXTS.entries()) {
        for (const flag of Object.keys(TYPES)) {
          assert.deepEqual(await viaClient(local, flag, context), expected[i][flag], `${flag} for ${JSON.stringify(context)}`);
          variants.add(`${flag}:${expected[i][flag].variant}:${expected[i][flag].reason}`);
        }
      }
      // The contexts cover rules, the segment, semver and both rollouts, not one answer everywhere.
      for (const seen of [
        "checkout:new:TARGETING_MATCH",
        "checkout:beta:TARGETING_MATCH",
        "dark-mode:on:TARGETING_MATCH",
        "limits:large:TARGETING_MATCH",
        "limits:small:DEFAULT",
      ]) {
        assert.ok(variants.has(seen), `${seen} in ${[...variants].join(", ")}`);
      }
      assert.ok(
        [...variants].some((v) => v.endsWith(":SPLIT")),
        [...variants].join(", "),
      );
      assert.deepEqual(provider.stats, { fetched: 1, notModified: 0, failed: 0 });
    },

    "flags: a change reaches the server provider on refresh (ETag: 200 once, then 304), with ConfigurationChanged": async () => {
      const changed = [];
      local.addHandler(ProviderEvents.ConfigurationChanged, (event) => changed.push(event.flagsChanged));
      assert.equal(await provider.refresh(), false, "nothing changed yet");
      assert.deepEqual(provider.stats, { fetched: 1, notModified: 1, failed: 0 });
      // The kill switch of checkout, and a new first rule of dark-mode (Japan: off).
      expectStatus(await api("PATCH", "flags/checkout", { environments: { production: { enabled: false } } }), 200, "switch checkout off");
      expectStatus(
        await api("PATCH", "flags/dark-mode", {
          environments: { production: { rules: [{ id: "jp", clauses: [{ attribute: "country", op: "in", values: ["JP"] }], serve: { variant: "off" } }] } },
        }),
        200,
        "dark-mode rule",
      );
      assert.equal(await provider.refresh(), true, "the change is fetched");
      assert.equal(await provider.refresh(), false, "then 304 again");
      assert.deepEqual(provider.stats, { fetched: 2, notModified: 2, failed: 0 });
      await eventually(() => changed.length > 0);
      assert.deepEqual(changed, [["checkout", "dark-mode"]]);
      const contexts = CONTEXTS.slice(0, 4);
      const expected = await serverAnswers(contexts);
      for (const [i, context] of contexts.entries()) {
        for (const flag of Object.keys(TYPES))
          assert.deepEqual(await viaClient(local, flag, context), expected[i][flag], `${flag} for ${JSON.stringify(context)}`);
      }
      assert.equal(expected[0].checkout.reason, "DISABLED");
      assert.deepEqual(expected[3]["dark-mode"], { value: false, variant: "off", reason: "TARGETING_MATCH", version: 2 });
      state.afterContexts = contexts;
      state.afterChange = expected;
    },

    "flags: @openfeature/ofrep-provider with a team key gives the same values and reasons": async () => {
      const contexts = need(state.afterContexts, "the answers after the change");
      for (const [i, context] of contexts.entries()) {
        for (const flag of Object.keys(TYPES)) {
          const ofrep = await viaClient(OpenFeature.getClient("ofrep-team"), flag, context);
          assert.deepEqual(ofrep, state.afterChange[i][flag], `${flag} for ${JSON.stringify(context)}`);
          assert.deepEqual(await viaClient(local, flag, context), ofrep);
        }
      }
    },

    "flags: @openfeature/ofrep-provider with a client key sees the client-side flags only, with the same answers": async () => {
      const contexts = need(state.afterContexts, "the answers after the change");
      const client = OpenFeature.getClient("ofrep-client");
      for (const [i, context] of contexts.entries()) {
        for (const flag of ["checkout", "dark-mode"]) assert.deepEqual(await viaClient(client, flag, context), state.afterChange[i][flag], flag);
      }
      assert.deepEqual(await viaClient(client, "limits", contexts[2]), { errorCode: "FLAG_NOT_FOUND" });
    },

    "flags: FLAG_NOT_FOUND and TARGETING_KEY_MISSING arrive as OpenFeature's error codes, the same from OFREP and the local provider": async () => {
      const team = OpenFeature.getClient("ofrep-team");
      const missing = await team.getBooleanDetails("no-such-flag", true, { targetingKey: "user-1" });
      assert.equal(missing.errorCode, "FLAG_NOT_FOUND");
      assert.equal(missing.value, true);
      assert.equal((await local.getBooleanDetails("no-such-flag", true, { targetingKey: "user-1" })).errorCode, "FLAG_NOT_FOUND");
      // dark-mode's fallthrough is a rollout by key: a context without one cannot be placed.
      const keyless = { country: "US" };
      const ofrep = await team.getBooleanDetails("dark-mode", true, keyless);
      assert.equal(ofrep.errorCode, "TARGETING_KEY_MISSING");
      assert.equal(ofrep.value, true);
      const mine = await local.getBooleanDetails("dark-mode", true, keyless);
      assert.equal(mine.errorCode, "TARGETING_KEY_MISSING");
      // A rule that matches before the rollout still serves without a key.
      assert.deepEqual(await viaClient(team, "dark-mode", { country: "JP" }), await viaClient(local, "dark-mode", { country: "JP" }));
    },

    "flags: the web provider bootstraps with a client key in Node, follows a context change and revalidates with a 304": async () => {
      const contexts = need(state.afterContexts, "the answers after the change");
      const webProvider = new EdgeFlagsWebProvider({ baseUrl: url, clientKey, trackExposures: true, flushIntervalMs: 60_000 });
      await web.OpenFeature.setContext(contexts[1]);
      await web.OpenFeature.setProviderAndWait(webProvider);
      const client = web.OpenFeature.getClient();
      const read = (flag) => {
        const d = TYPES[flag] === "boolean" ? client.getBooleanDetails(flag, false) : client.getStringDetails(flag, "default");
        return d.errorCode ? { errorCode: d.errorCode } : { value: d.value, variant: d.variant, reason: d.reason, version: d.flagMetadata?.version };
      };
      for (const flag of ["checkout", "dark-mode"]) assert.deepEqual(read(flag), state.afterChange[1][flag], flag);
      assert.deepEqual(read("limits"), { errorCode: "FLAG_NOT_FOUND" });
      await web.OpenFeature.setContext(contexts[3]);
      for (const flag of ["checkout", "dark-mode"]) assert.deepEqual(read(flag), state.afterChange[3][flag], flag);
      assert.equal(await webProvider.refresh(), false);
      assert.deepEqual({ ...webProvider.stats, tracked: 0 }, { fetched: 2, notModified: 1, failed: 0, tracked: 0 });
      await webProvider.flush();
      // u-beta's and user-2's exposures of dark-mode count in its insights. An isolate sends its
      // counts to the store from an evaluating request at most every 10 s (flags.insights.ts), so
      // each poll makes one (an OFREP evaluation of checkout: evaluations, never exposures).
      await eventually(
        async () => {
          const nudge = await request(url, "POST", "/ofrep/v1/evaluate/flags/checkout", { key: clientKey, body: { context: { targetingKey: "nudge" } } });
          expectStatus(nudge, 200, "OFREP evaluation");
          const insights = expectStatus(await api("GET", "flags/dark-mode/insights"), 200, "insights").body.data;
          const exposures = insights.hours.reduce((sum, h) => sum + h.exposures, 0);
          assert.equal(exposures, 2, JSON.stringify(insights.hours));
          return true;
        },
        { timeoutMs: 30_000, intervalMs: 1_000 },
      );
      await web.OpenFeature.close();
    },

    "flags: providers close": async () => {
      await OpenFeature.close();
    },
  };
}
