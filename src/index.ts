// Worker entry: HTTP to the Hono app, queue batches to the consumer declared for their queue, cron
// runs to the jobs declared for their schedule. Both tables are built from the lists below (a test
// holds them against wrangler.toml). The Durable Object classes are exported here.
import { log } from "./platform/log";
import { app } from "./app";
import type { Env } from "./env";
import { consoleRetentionCron } from "./console/console.cron";
import { idempotencyRetentionCron } from "./platform/idempotency";
import { usageDailyRetentionCron } from "./platform/usage/rollup";
import { consumerTable, type Consumer } from "./platform/jobs/consume";
import { cronTable, runScheduled, type CronJob } from "./platform/jobs/cron";
import { deadLetterConsumer } from "./platform/jobs/dead-letters";
import { reportExportConsumer } from "./products/audit/audit.consumer";
import { auditExportSweepCron, auditRiskSeriesCron } from "./products/audit/audit.cron";
import { auditScansConsumer } from "./products/audit/audit-scan.consumer";
import { auditScanRetentionCron, auditScanSchedulesCron, auditScanSweepCron } from "./products/audit/audit-scan.cron";
import { alertChecksConsumer, alertNotificationsConsumer } from "./products/logs/logs.consumer";
import { alertChecksCron } from "./products/logs/log-alerts.cron";
import { logsRetentionCron } from "./products/logs/logs.cron";
import { mailSendsConsumer } from "./products/mail/mail.consumer";
import { mailRetentionCron, mailSweepCron } from "./products/mail/mail.cron";
import { pushSendsConsumer } from "./products/push/push.consumer";
import { pushRetentionCron, pushSweepCron } from "./products/push/push.cron";
import { webhookDeliveriesConsumer } from "./products/relay/relay.consumer";
import { surveyWebhooksConsumer } from "./products/surveys/surveys.consumer";
import { surveyDeliveriesRetentionCron, surveyDeliveriesSweepCron } from "./products/surveys/surveys.cron";

export { RateLimiter } from "./platform/rate-limit/durable-object";
export { LogStore } from "./products/logs/store/log-store";
export { RequestLogStore } from "./platform/request-log/request-log-store";
export { PushStore } from "./products/push/store/push-store";
export { SurveyStore } from "./products/surveys/store/survey-store";
export { RelayStore } from "./products/relay/store/relay-store";

/** Every declared queue consumer. */
export const consumerDeclarations: readonly Consumer[] = [
  reportExportConsumer,
  auditScansConsumer,
  alertNotificationsConsumer,
  alertChecksConsumer,
  webhookDeliveriesConsumer,
  mailSendsConsumer,
  pushSendsConsumer,
  surveyWebhooksConsumer,
  deadLetterConsumer,
];

/** Every declared cron job. */
export const cronDeclarations: readonly CronJob[] = [
  alertChecksCron,
  usageDailyRetentionCron,
  logsRetentionCron,
  mailSweepCron,
  mailRetentionCron,
  surveyDeliveriesSweepCron,
  surveyDeliveriesRetentionCron,
  pushSweepCron,
  pushRetentionCron,
  auditExportSweepCron,
  auditRiskSeriesCron,
  auditScanSweepCron,
  auditScanSchedulesCron,
  auditScanRetentionCron,
  idempotencyRetentionCron,
  consoleRetentionCron,
];

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
