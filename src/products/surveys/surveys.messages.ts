// The surveys product's queue message (survey-webhooks): a leaf file, so src/env.ts types the
// queue without importing the consumer.
import { z } from "zod";
import { rowId } from "../../platform/jobs/row-id";
import { defineQueue } from "../../platform/jobs/queues";

/** One message of the survey-webhooks queue: the delivery row to attempt. */
export const surveyWebhookMessage = z.object({
  delivery_id: rowId,
  /** Set on messages the sweeper sent; the completion's own message has none. */
  token: rowId.optional(),
});
export type SurveyWebhookMessage = z.infer<typeof surveyWebhookMessage>;

/**
 * The queue of `SurveyWebhookMessage` (wrangler.toml: max_retries = 8). Its claim: a minute, well
 * beyond the 10 s request timeout; every delivery the queue makes, max_retries 8 plus the first
 * (a test holds both).
 */
export const surveyWebhooksQueue = defineQueue({ name: "survey-webhooks", binding: "SURVEY_QUEUE", maxRetries: 8, claim: { leaseMs: 60_000, maxAttempts: 9 } });

// The producer binding carries the message type, so a producer sending anything else fails the
// type-check (wrangler's generated types know only `Queue`).
declare module "../../env" {
  interface Env {
    SURVEY_QUEUE: Queue<SurveyWebhookMessage>;
  }
}
