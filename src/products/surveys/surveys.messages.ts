// The surveys product's queue message (survey-webhooks): a leaf file, so src/env.ts types the
// queue without importing the consumer.
import { z } from "zod";
import { rowId } from "../../platform/jobs/row-id";

/** One message of the survey-webhooks queue: the delivery row to attempt. */
export const surveyWebhookMessage = z.object({
  delivery_id: rowId,
  /** Set on messages the sweeper sent; the completion's own message has none. */
  token: rowId.optional(),
});
export type SurveyWebhookMessage = z.infer<typeof surveyWebhookMessage>;
