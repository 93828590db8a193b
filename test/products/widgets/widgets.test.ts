// The product definition end to end, through a product registered only here (widgets.product.tsx)
// that declares every hook: the app built with it serves its routers, operator routes, console
// page and navigation entry, scope picker group, usage service, bucket and tag; the entry's tables
// dispatch to its consumer and jobs; the catalog refuses a second declaration of a name; and the
// wrangler.toml check names what it declares that wrangler.toml lacks, and the reverse.
import { createExecutionContext, createMessageBatch, env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import { consumersOf, cronsOf } from "../../../src/index";
import * as benchEntry from "../../../bench/worker";
import * as entry from "../../../src/index";
import { consumerTable } from "../../../src/platform/jobs/consume";
import { deliveriesOf } from "../../../src/platform/jobs/queues";
import { planLimits, serviceMetric, services } from "../../../src/platform/plans";
import { catalog, registerProducts } from "../../../src/platform/products";
import { bucketLimit } from "../../../src/platform/rate-limit/buckets";
import { hasScope, keyScopes, specScopes } from "../../../src/platform/scopes";
import { PRODUCTS } from "../../../src/products";
import { ADMIN_TOKEN, ORIGIN, setupTeam } from "../../helpers/api";
import { consoleTeam } from "../../helpers/console";
import { PLATFORM_CLASSES, wranglerMismatches } from "../../helpers/wrangler";
import { BUCKET, FAMILY, READ, ran, SERVICE, WidgetStore, WRITE, widgetJobs, widgets } from "./widgets.product";

const WITH_WIDGETS = [...PRODUCTS, widgets];
let app: ReturnType<typeof createApp>;

beforeAll(() => {
  registerProducts(WITH_WIDGETS);
  app = createApp(WITH_WIDGETS);
});
afterAll(() => {
  registerProducts(PRODUCTS);
});

let ip = 0;
async function send(method: string, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return await app.fetch(
    new Request(`${ORIGIN}${path}`, { method, headers: { "cf-connecting-ip": `198.51.100.${++ip % 200}`, ...headers } }),
    env,
    createExecutionContext(),
  );
}

describe("a product registered with the platform", () => {
  it("adds its scopes (after the products before it, before billing:read), the implied one, its service and limits, its bucket and family", () => {
    expect(specScopes().slice(-3)).toEqual([READ, WRITE, "billing:read"]);
    expect(keyScopes()).toContain(WRITE);
    expect(hasScope([WRITE], READ)).toBe(true);
    expect(hasScope([READ], WRITE)).toBe(false);
    expect(services()).toContain(SERVICE);
    expect(serviceMetric(SERVICE)).toBe("widgets_made");
    expect(planLimits("free").monthly[SERVICE]).toBe(5);
    expect(planLimits("enterprise").monthly[SERVICE]).toBeNull();
    expect(bucketLimit(BUCKET)).toBe(3);
    expect(catalog().strictFamilies.has(FAMILY)).toBe(true);
    expect(deliveriesOf("widget-jobs")).toBe(4);
  });

  it("serves its API router with its scopes: 401 without a key, 403 without the scope, 200 with the implied one", async () => {
    const writer = await setupTeam({ scopes: [WRITE] });
    const other = await setupTeam({ scopes: ["logs:read"] });
    expect((await send("GET", "/api/v1/widgets")).status).toBe(401);
    expect((await send("GET", "/api/v1/widgets", { authorization: `Bearer ${other.key}` })).status).toBe(403);
    const read = await send("GET", "/api/v1/widgets", { authorization: `Bearer ${writer.key}` });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ data: [{ name: "first" }] });
    expect((await send("POST", "/api/v1/widgets", { authorization: `Bearer ${writer.key}` })).status).toBe(200);
    // An unserved path gets the product's check before its 404.
    expect((await send("GET", "/api/v1/widgets/nothing")).status).toBe(401);
  });

  it("serves its public router counted in its own bucket (3 a minute per IP)", async () => {
    const fixed = { "cf-connecting-ip": "192.0.2.77" };
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await send("GET", "/widgets-public", fixed)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it("mounts its operator routes under /api/v1/admin/widgets behind the operator token", async () => {
    expect((await send("GET", "/api/v1/admin/widgets/stats")).status).toBe(401);
    const res = await send("GET", "/api/v1/admin/widgets/stats", { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { widgets: 1 } });
  });

  it("reports its service in GET /usage to a key holding its scope", async () => {
    const team = await setupTeam({ plan: "starter", scopes: ["mail:read", READ] });
    const res = await send("GET", "/api/v1/usage", { authorization: `Bearer ${team.key}` });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: { services: Record<string, { metric: string; limit: number }> } };
    expect(Object.keys(data.services).sort()).toEqual(["mail", "widgets"]);
    expect(data.services.widgets).toMatchObject({ metric: "widgets_made", limit: 50, used: 0 });
  });

  it("shows its console page with its navigation entry, its scope group in the picker, its service on the usage page", async () => {
    const team = await consoleTeam("owner");
    const page = await send("GET", `/console/teams/${team.teamId}/widgets`, { cookie: team.cookie });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('data-testid="widgets-page"');
    expect(html).toMatch(/<a[^>]*href="\/console\/teams\/[^"]+\/widgets"[^>]*aria-current="page"[^>]*>Widgets<\/a>/);
    const keys = await (await send("GET", `/console/teams/${team.teamId}/keys`, { cookie: team.cookie })).text();
    expect(keys).toContain("Widgets");
    expect(keys).toContain(`name="scopes" value="${WRITE}"`);
    const usage = await (await send("GET", `/console/teams/${team.teamId}/usage`, { cookie: team.cookie })).text();
    expect(usage).toContain("widgets");
  });

  it("adds its tag (before the operator's) and its paths to the OpenAPI document", async () => {
    const doc = (await (await send("GET", "/api/v1/openapi.json")).json()) as { tags: { name: string }[]; paths: Record<string, unknown> };
    const tags = doc.tags.map((t) => t.name);
    expect(tags.slice(-2)).toEqual(["Widgets", "Operator"]);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/v1/widgets", "/widgets-public", "/api/v1/admin/widgets/stats"]));
  });

  it("gives the entry its consumer and its jobs, retention included", async () => {
    const consumer = consumerTable(consumersOf(WITH_WIDGETS))[widgetJobs.name];
    expect(consumer).toBeDefined();
    await consumer!.consume(createMessageBatch(widgetJobs.name, [{ id: "w1", timestamp: new Date(), attempts: 1, body: { n: 1 } }]), env);
    const jobs = cronsOf(WITH_WIDGETS).filter((job) => job.name.startsWith("widgets"));
    expect(jobs.map((job) => job.name)).toEqual(["widgets tidy", "widgets retention"]);
    for (const job of jobs) await job.run(env);
    expect(ran).toEqual(['consumed {"n":1}', "tidied", "purged"]);
  });

  it("refuses a second declaration of a product, scope, service, bucket, queue, class or tag", () => {
    expect(() => registerProducts([...WITH_WIDGETS, widgets])).toThrow("two products declare the product widgets");
    const twin = (changes: object) => ({
      ...widgets,
      name: "twin",
      scopes: undefined,
      services: undefined,
      rateLimits: undefined,
      queues: undefined,
      durableObjects: undefined,
      tags: undefined,
      ...changes,
    });
    expect(() => registerProducts([...WITH_WIDGETS, twin({ scopes: { label: "x", names: [READ] } })])).toThrow(`the scope ${READ}`);
    expect(() => registerProducts([...WITH_WIDGETS, twin({ services: widgets.services })])).toThrow("the service widgets");
    expect(() => registerProducts([...WITH_WIDGETS, twin({ rateLimits: { buckets: { [BUCKET]: 1 } } })])).toThrow(`the bucket ${BUCKET}`);
    expect(() => registerProducts([...WITH_WIDGETS, twin({ queues: [widgetJobs] })])).toThrow("the queue widget-jobs");
    expect(() => registerProducts([...WITH_WIDGETS, twin({ durableObjects: { WidgetStore } })])).toThrow("the Durable Object class WidgetStore");
    expect(() => registerProducts([...WITH_WIDGETS, twin({ tags: widgets.tags })])).toThrow("the tag Widgets");
    registerProducts(WITH_WIDGETS);
  });
});

describe("the product list against wrangler.toml", () => {
  const wrangler = env.TEST_WRANGLER_JOBS;

  it("declares exactly the queues, producers, consumers, crons and Durable Object classes wrangler.toml does", () => {
    expect(wranglerMismatches(PRODUCTS, wrangler)).toEqual([]);
  });

  it("names a queue and a class a product declares that wrangler.toml lacks", () => {
    expect(wranglerMismatches(WITH_WIDGETS, wrangler)).toEqual([
      "queue widget-jobs (max_retries 3) is declared but wrangler.toml lacks it",
      "consumer of queue widget-jobs is declared but wrangler.toml lacks it",
      "Durable Object class WidgetStore is declared but wrangler.toml lacks it",
    ]);
  });

  it("names what wrangler.toml declares that no product does: a product left out of the list", () => {
    const withoutRelay = PRODUCTS.filter((product) => product.name !== "relay");
    expect(wranglerMismatches(withoutRelay, wrangler)).toEqual([
      "queue webhook-deliveries (max_retries 10) is in wrangler.toml but nothing declares it",
      "producer WEBHOOK_QUEUE → webhook-deliveries is in wrangler.toml but nothing declares it",
      "consumer of queue webhook-deliveries is in wrangler.toml but nothing declares it",
      "Durable Object class RelayStore is in wrangler.toml but nothing declares it",
    ]);
    const everyMinuteOnly = PRODUCTS.map((product) => ({ ...product, crons: product.crons?.filter((job) => job.schedule === "everyMinute"), retention: [] }));
    expect(wranglerMismatches(everyMinuteOnly, wrangler)).toEqual([]);
  });

  it("exports every declared Durable Object class from the entry under its class_name", () => {
    const exported = entry as unknown as Record<string, unknown>;
    for (const name of PLATFORM_CLASSES) expect(exported[name], name).toBeTypeOf("function");
    for (const product of PRODUCTS) {
      for (const [name, cls] of Object.entries(product.durableObjects ?? {})) expect(exported[name], name).toBe(cls);
    }
  });

  it("the bench Worker (bench/worker.ts, the same wrangler.toml's bindings) exports every class too, or wrangler dev will not start it", () => {
    const exported = benchEntry as unknown as Record<string, unknown>;
    for (const name of PLATFORM_CLASSES) expect(exported[name], name).toBeTypeOf("function");
    for (const product of PRODUCTS) {
      for (const [name, cls] of Object.entries(product.durableObjects ?? {})) expect(exported[name], name).toBe(cls);
    }
  });
});
