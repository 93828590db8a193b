// Worker entry: HTTP to the Hono app, queue batches to the consumer declared for their queue, cron
// runs to the jobs declared for their schedule. Both tables are built from the platform's own jobs
// and the product list (src/products/index.ts; a test holds them against wrangler.toml). The
// Durable Object classes are exported here: the platform's, and the products' through the list.
import { log } from "./platform/log";
import { app } from "./app";
import type { Env } from "./env";
import { consoleRetentionCron } from "./console/console.cron";
import { idempotencyRetentionCron } from "./platform/idempotency";
import { usageDailyRetentionCron } from "./platform/usage/rollup";
import { consumerTable, type Consumer } from "./platform/jobs/consume";
import { cronTable, runScheduled, type CronJob } from "./platform/jobs/cron";
import { deadLetterConsumer } from "./platform/jobs/dead-letters";
import type { ProductDefinition } from "./platform/products";
import { PRODUCTS } from "./products";

export { RateLimiter } from "./platform/rate-limit/durable-object";
export { RequestLogStore } from "./platform/request-log/request-log-store";
// The products' Durable Object classes, each under its class_name: named here, not `export *`, as
// wrangler's generated types (src/worker-configuration.d.ts) type a binding only with a class the
// entry names (a test holds this line against the products' definitions and wrangler.toml).
export { AnalyticsSaltStore, AnalyticsStore, FlagStore, FormStore, LogStore, PushStore, RelayStore, SurveyStore } from "./products";

/** The queue consumers of the products, then the platform's dead-letter consumer. */
export function consumersOf(products: readonly ProductDefinition[]): readonly Consumer[] {
  return [...products.flatMap((product) => product.consumers ?? []), deadLetterConsumer];
}

/** The cron jobs of the products (their retention included), then the platform's. */
export function cronsOf(products: readonly ProductDefinition[]): readonly CronJob[] {
  return [
    ...products.flatMap((product) => [...(product.crons ?? []), ...(product.retention ?? [])]),
    usageDailyRetentionCron,
    idempotencyRetentionCron,
    consoleRetentionCron,
  ];
}

/** Every declared queue consumer. */
export const consumerDeclarations: readonly Consumer[] = consumersOf(PRODUCTS);

/** Every declared cron job. */
export const cronDeclarations: readonly CronJob[] = cronsOf(PRODUCTS);

/** The consumer of each queue, by queue name. */
export const consumers = consumerTable(consumerDeclarations);
/** The jobs of each cron expression. */
export const cronJobs = cronTable(cronDeclarations);

export default {
  fetch: app.fetch,

  // The runtime passes an ExecutionContext too; no consumer needs it (their work is awaited).
  async queue(batch, env, _ctx) {
    const consumer = Object.hasOwn(consumers, batch.queue) ? consumers[batch.queue as keyof typeof consumers] : undefined;
    if (!consumer) {
      log.error("no consumer for queue", { queue: batch.queue });
      batch.retryAll();
      return;
    }
    await consumer.consume(batch, env);
  },

  async scheduled(controller, env) {
    await runScheduled(cronJobs, controller.cron, env);
  },
} satisfies ExportedHandler<Env>;
