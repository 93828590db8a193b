// Worker entry: HTTP to the Hono app, queue batches to the product consumer of their queue, cron
// runs to the product jobs of their schedule. The Durable Object classes are exported here.
import { app } from "./app";
import type { Env } from "./env";
import type { QueueName } from "./platform/jobs/queues";
import { idempotencyRetention } from "./platform/idempotency";
import { auditExportConsumer } from "./products/audit/audit.consumer";
import { auditExportSweepJob } from "./products/audit/audit.cron";
import { consumeAlertNotifications } from "./products/logs/logs.consumer";
import { checkLogAlerts, consumeAlertChecks } from "./products/logs/log-alerts.cron";
import { cleanUpLogs } from "./products/logs/logs.cron";
import { consumeDeliveries } from "./products/relay/relay.consumer";
import { relayRetentionJob } from "./products/relay/relay.cron";
import { handleMailBatch } from "./products/mail/mail.consumer";
import { mailRetention, sweepMail } from "./products/mail/mail.cron";
import { pushConsumer } from "./products/push/push.consumer";
import { pushRetention, sweepPush } from "./products/push/push.cron";
import { consumeSurveyWebhooks } from "./products/surveys/surveys.consumer";
import { surveyDeliveryRetention, sweepSurveyDeliveries } from "./products/surveys/surveys.cron";

export { RateLimiter } from "./platform/rate-limit/durable-object";
export { LogStore } from "./products/logs/store/log-store";

type QueueHandler = (batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext) => Promise<void>;
/** A scheduled job; what it returns (counts of work done) is for its tests, not for the runner. */
type CronJob = (env: Env, scheduledTime: number) => Promise<unknown>;

/** The consumer of each queue, by queue name (the queue table, itself held against wrangler.toml). */
export const consumers: Record<QueueName, QueueHandler> = {
  "report-export": auditExportConsumer,
  "alert-notifications": consumeAlertNotifications,
  "log-alert-checks": consumeAlertChecks,
  "webhook-deliveries": consumeDeliveries,
  "mail-sends": handleMailBatch,
  "push-sends": pushConsumer,
  "survey-webhooks": consumeSurveyWebhooks,
  "platform-dlq": async (batch) => {
    // Messages land here after their consumer exhausted its retries; consumers record the final
    // failure themselves, so this only keeps a trace and acknowledges.
    for (const message of batch.messages) {
      console.error(JSON.stringify({ msg: "dead letter", queue: batch.queue, id: message.id, attempts: message.attempts, body: message.body }));
      message.ack();
    }
  },
};

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

  async queue(batch, env, ctx) {
    const consumer = (consumers as Record<string, QueueHandler | undefined>)[batch.queue];
    if (!consumer) {
      console.error(JSON.stringify({ msg: "no consumer for queue", queue: batch.queue }));
      batch.retryAll();
      return;
    }
    await consumer(batch, env, ctx);
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
