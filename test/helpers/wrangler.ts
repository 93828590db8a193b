// What a product list declares against what wrangler.toml declares (its queues with max_retries,
// producer bindings, crons and Durable Object classes, read by vitest.config.ts): every difference,
// in both directions, as one line each. The platform's own queue (the dead-letter queue), jobs
// and classes count as declared.
import { cronsOf, consumersOf } from "../../src/index";
import { SCHEDULES } from "../../src/platform/jobs/cron";
import { deadLetterQueue, type QueueDeclaration } from "../../src/platform/jobs/queues";
import type { ProductDefinition } from "../../src/platform/products";

/** The Durable Object classes the platform itself exports from the entry. */
export const PLATFORM_CLASSES = ["RateLimiter", "RequestLogStore"];

export interface WranglerJobs {
  consumers: { queue: string; max_retries: number | null }[];
  producers: { binding: string; queue: string }[];
  crons: string[];
  classes: string[];
}

function differences(kind: string, declared: Iterable<string>, wrangler: Iterable<string>): string[] {
  const ours = new Set(declared);
  const theirs = new Set(wrangler);
  return [
    ...[...ours].filter((x) => !theirs.has(x)).map((x) => `${kind} ${x} is declared but wrangler.toml lacks it`),
    ...[...theirs].filter((x) => !ours.has(x)).map((x) => `${kind} ${x} is in wrangler.toml but nothing declares it`),
  ];
}

export function wranglerMismatches(products: readonly ProductDefinition[], wrangler: WranglerJobs): string[] {
  const queues: QueueDeclaration[] = [deadLetterQueue, ...products.flatMap((p) => p.queues ?? [])];
  const problems = [
    ...differences(
      "queue",
      queues.map((q) => `${q.name} (max_retries ${q.maxRetries})`),
      wrangler.consumers.map((c) => `${c.queue} (max_retries ${c.max_retries})`),
    ),
    ...differences(
      "producer",
      queues.filter((q) => q.binding !== null).map((q) => `${q.binding} → ${q.name}`),
      wrangler.producers.map((p) => `${p.binding} → ${p.queue}`),
    ),
    ...differences(
      "consumer of queue",
      consumersOf(products).map((c) => c.queue),
      wrangler.consumers.map((c) => c.queue),
    ),
    ...differences(
      "cron",
      cronsOf(products).map((job) => SCHEDULES[job.schedule]),
      wrangler.crons,
    ),
    ...differences("Durable Object class", [...PLATFORM_CLASSES, ...products.flatMap((p) => Object.keys(p.durableObjects ?? {}))], wrangler.classes),
  ];
  // A product's queues are consumed by its own consumers, one each.
  for (const product of products) {
    const own = new Set((product.queues ?? []).map((q) => q.name));
    const consumed = (product.consumers ?? []).map((c) => c.queue);
    for (const queue of own) if (!consumed.includes(queue)) problems.push(`${product.name} declares queue ${queue} without its consumer`);
    for (const queue of consumed) if (!own.has(queue)) problems.push(`${product.name} consumes queue ${queue} it does not declare`);
  }
  return problems;
}
