// The relay's per-isolate source cache (issue 15): a provider sending a stream of events costs one
// D1 read of its source per SOURCE_CACHE_TTL_MS, not one per event; changes made through this
// isolate apply to the very next event; a change made elsewhere (written to D1 directly here, as
// another isolate would) applies within SOURCE_CACHE_TTL_MS. Reads are counted, never timed.
import { afterEach, describe, expect, it } from "vitest";
import type { Env } from "../../../src/env";
import { setClock } from "../../../src/platform/clock";
import { SOURCE_CACHE_TTL_MS } from "../../../src/products/relay/relay.ingest";
import { admin, call, expectError, json, setupTeam } from "../../helpers/api";
import { countingDb } from "../../helpers/counting";
import { createDestination, createSource, env, genericHeaders, ingest } from "./relay.helpers";

/** A whole second in 2031: the quota month and the generic signature do not care. */
const T0 = Date.UTC(2031, 2, 3, 10, 0, 0);
afterEach(() => setClock(null));

async function signedSource() {
  const team = await setupTeam();
  const secret = "whsec-cache-test";
  const source = await createSource(team.key, { signing_secret: secret });
  return { team, secret, source };
}

async function send(slug: string, secret: string, n: number, bindings?: Env) {
  const body = JSON.stringify({ id: `evt-${n}-${crypto.randomUUID()}`, type: "cache.test" });
  return ingest(slug, body, await genericHeaders(secret, body), bindings ? { env: bindings } : {});
}

/** The pool's bindings with a D1 that records its statements. */
function countedBindings() {
  const counted = countingDb();
  return { counted, bindings: { ...(env as Env), DB: counted.db } };
}

/** Statements of a request that read the source row. */
const sourceReads = (queries: string[]) => queries.filter((q) => /from "webhook_sources"/i.test(q)).length;

describe("relay source cache", () => {
  it("reads the source once per TTL for a stream of events", async () => {
    setClock(T0);
    const { secret, source } = await signedSource();
    const { counted, bindings } = countedBindings();
    expect((await send(source.slug, secret, 1, bindings)).status).toBe(202);
    const first = sourceReads(counted.queries);
    expect(first).toBeGreaterThan(0);
    for (let n = 2; n <= 5; n++) expect((await send(source.slug, secret, n, bindings)).status).toBe(202);
    expect(sourceReads(counted.queries)).toBe(first);
    setClock(T0 + SOURCE_CACHE_TTL_MS);
    expect((await send(source.slug, secret, 6, bindings)).status).toBe(202);
    expect(sourceReads(counted.queries)).toBe(2 * first);
  });

  it("applies a change written elsewhere within SOURCE_CACHE_TTL_MS", async () => {
    setClock(T0);
    const { secret, source } = await signedSource();
    expect((await send(source.slug, secret, 1)).status).toBe(202);
    // Another isolate disabled the source: this one serves what it read until the bound.
    await env.DB.prepare("UPDATE webhook_sources SET enabled = 0 WHERE id = ?").bind(source.id).run();
    setClock(T0 + SOURCE_CACHE_TTL_MS - 1);
    expect((await send(source.slug, secret, 2)).status).toBe(202);
    setClock(T0 + SOURCE_CACHE_TTL_MS);
    await expectError(await send(source.slug, secret, 3), 410, { error: "Source is disabled" });
  });

  it("applies changes made through this isolate to the very next event", async () => {
    setClock(T0);
    const { team, secret, source } = await signedSource();
    expect((await send(source.slug, secret, 1)).status).toBe(202);

    // A destination added: the next event is delivered to it; removed: no longer.
    const destination = await createDestination(team.key, source.id);
    const withDestination = await send(source.slug, secret, 2);
    expect((await json(withDestination)).data.deliveries).toBe(1);
    expect((await call("DELETE", `webhooks/sources/${source.id}/destinations/${destination.id}`, { key: team.key })).status).toBe(204);
    expect((await json(await send(source.slug, secret, 3))).data.deliveries).toBe(0);

    // The signing secret rotated: the old one is refused at once, the new one accepted.
    const rotated = "whsec-rotated";
    expect((await call("PATCH", `webhooks/sources/${source.id}`, { key: team.key, body: { signing_secret: rotated } })).status).toBe(200);
    await expectError(await send(source.slug, secret, 4), 401, { error: "Invalid webhook signature" });
    expect((await send(source.slug, rotated, 5)).status).toBe(202);

    // Disabled, then deleted.
    expect((await call("PATCH", `webhooks/sources/${source.id}`, { key: team.key, body: { enabled: false } })).status).toBe(200);
    await expectError(await send(source.slug, rotated, 6), 410, { error: "Source is disabled" });
    expect((await call("DELETE", `webhooks/sources/${source.id}`, { key: team.key })).status).toBe(204);
    await expectError(await send(source.slug, rotated, 7), 404, { error: "Source not found" });
  });

  it("re-reads the source after its team's plan changed on this isolate", async () => {
    setClock(T0);
    const { team, secret, source } = await signedSource();
    const { counted, bindings } = countedBindings();
    expect((await send(source.slug, secret, 1, bindings)).status).toBe(202);
    const first = sourceReads(counted.queries);
    expect((await admin("PATCH", `teams/${team.teamId}`, { plan: "scale" })).status).toBe(200);
    expect((await send(source.slug, secret, 2, bindings)).status).toBe(202);
    expect(sourceReads(counted.queries)).toBe(2 * first);
  });

  it("another team's change never drops this source, and an unknown slug is never cached", async () => {
    setClock(T0);
    const { secret, source } = await signedSource();
    const other = await setupTeam();
    const { counted, bindings } = countedBindings();
    expect((await send(source.slug, secret, 1, bindings)).status).toBe(202);
    const first = sourceReads(counted.queries);
    expect((await admin("PATCH", `teams/${other.teamId}`, { plan: "scale" })).status).toBe(200);
    expect((await send(source.slug, secret, 2, bindings)).status).toBe(202);
    expect(sourceReads(counted.queries)).toBe(first);

    const unknown = `unknown-${crypto.randomUUID().slice(0, 8)}`;
    await expectError(await send(unknown, secret, 3, bindings), 404, { error: "Source not found" });
    await expectError(await send(unknown, secret, 4, bindings), 404, { error: "Source not found" });
    expect(sourceReads(counted.queries)).toBe(3 * first);
  });
});
