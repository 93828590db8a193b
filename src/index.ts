// Worker entry: HTTP to the Hono app, queue batches to the consumer declared for their queue, cron
// runs to the product jobs of their schedule. The Durable Object classes are exported here.
import { app } from "./app";
import type { Env } from "./env";
import { idempotencyRetention } from "./platform/idempotency";
import { consumerTable, type Consumer } from "./platform/jobs/consume";
import { deadLetterConsumer } from "./platform/jobs/dead-letters";
import { reportExportConsumer } from "./products/audit/audit.consumer";
import { auditExportSweepJob } from "./products/audit/audit.cron";
import { alertChecksConsumer, alertNotificationsConsumer } from "./products/logs/logs.consumer";
import { checkLogAlerts } from "./products/logs/log-alerts.cron";
import { cleanUpLogs } from "./products/logs/logs.cron";
import { mailSendsConsumer } from "./products/mail/mail.consumer";
import { mailRetention, sweepMail } from "./products/mail/mail.cron";
import { pushSendsConsumer } from "./products/push/push.consumer";
import { pushRetention, sweepPush } from "./products/push/push.cron";
import { webhookDeliveriesConsumer } from "./products/relay/relay.consumer";
import { relayRetentionJob } from "./products/relay/relay.cron";
import { surveyWebhooksConsumer } from "./products/surveys/surveys.consumer";
import { surveyDeliveryRetention, sweepSurveyDeliveries } from "./products/surveys/surveys.cron";

export { RateLimiter } from "./platform/rate-limit/durable-object";
export { LogStore } from "./products/logs/store/log-store";

/** A scheduled job; what it returns (counts of work done) is for its tests, not for the runner. */
type CronJob = (env: Env, scheduledTime: number) => Promise<unknown>;

/** Every declared queue consumer. */
export const consumerDeclarations: readonly Consumer[] = [
  reportExportConsumer,
  alertNotificationsConsumer,
  alertChecksConsumer,
  webhookDeliveriesConsumer,
  mailSendsConsumer,
  pushSendsConsumer,
  surveyWebhooksConsumer,
  deadLetterConsumer,
];

/** The consumer of each queue, by queue name. */
export const consumers = consumerTable(consumerDeclarations);

/** The jobs of each cron expression (wrangler.toml). */
export const cronJobs: Record<string, CronJob[]> = {
  "* * * * *": [checkLogAlerts],
  "0 * * * *": [
    cleanUpLogs,
    relayRetentionJob,
    sweepMail,
    mailRetention,
    sweepSurveyDeliveries,
    surveyDeliveryRetention,
    sweepPush,
    pushRetention,
    auditExportSweepJob,
    idempotencyRetention,
  ],
};

export default {
  fetch: app.fetch,

  // The runtime passes an ExecutionContext too; no consumer needs it (their work is awaited).
  async queue(batch, env, _ctx) {
    const consumer = Object.hasOwn(consumers, batch.queue) ? consumers[batch.queue as keyof typeof consumers] : undefined;
    if (!consumer) {
      console.error(JSON.stringify({ msg: "no consumer for queue", queue: batch.queue }));
      batch.retryAll();
      return;
    }
    await consumer.consume(batch, env);
  },

  async scheduled(controller, env) {
    const jobs = cronJobs[controller.cron] ?? [];
    // One failing job must not stop the others of the same run.
    const results = await Promise.allSettled(jobs.map((job) => job(env, controller.scheduledTime)));
    for (const result of results) {
      if (result.status === "rejected") console.error(JSON.stringify({ msg: "cron job failed", cron: controller.cron, error: String(result.reason) }));
    }
  },
} satisfies ExportedHandler<Env>;
