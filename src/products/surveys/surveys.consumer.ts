// Consumer of the survey-webhooks queue: each message names one delivery row (one webhook, one
// event). The body is signed with Standard Webhooks headers; the delivery id is the `webhook-id`,
// stable across retries. A delivered or failed row is never sent again, so redelivery of a
// message does not duplicate work.
import { eq } from "drizzle-orm";
import { getDb } from "../../db/client";
import { surveyWebhookDeliveries, surveyWebhooks } from "../../db/schema/surveys";
import type { Env } from "../../env";
import { backoffSeconds } from "../../platform/backoff";
import { nowIso, nowSeconds } from "../../platform/clock";
import { decryptSecret } from "../../platform/crypto";
import { BlockedUrlError, safeFetch, ssrfOptions } from "../../platform/ssrf";
import { standardWebhookHeaders } from "../../platform/webhook-signature";

/** Deliveries are attempted this many times before they are marked failed (wrangler max_retries + 1). */
export const MAX_DELIVERY_ATTEMPTS = 9;
export const DELIVERY_TIMEOUT_MS = 10_000;

export interface SurveyWebhookMessage {
  delivery_id: string;
}

type Outcome = { kind: "done" } | { kind: "retry" };

async function deliver(env: Env, deliveryId: string, attempt: number): Promise<Outcome> {
  const db = getDb(env.DB);
  const row = await db
    .select({ delivery: surveyWebhookDeliveries, url: surveyWebhooks.url, secretEncrypted: surveyWebhooks.secretEncrypted })
    .from(surveyWebhookDeliveries)
    .innerJoin(surveyWebhooks, eq(surveyWebhooks.id, surveyWebhookDeliveries.webhookId))
    .where(eq(surveyWebhookDeliveries.id, deliveryId))
    .get();
  // Gone (webhook or survey deleted) or already settled: nothing left to do.
  if (!row || row.delivery.status !== "pending") return { kind: "done" };

  const { delivery } = row;
  const secret = await decryptSecret(env.ENCRYPTION_KEY, row.secretEncrypted, env.ENCRYPTION_KEY_PREVIOUS);
  const headers = await standardWebhookHeaders(secret, delivery.id, nowSeconds(), delivery.payload);
  let status: number | null = null;
  let error: string | null = null;
  try {
    const response = await safeFetch(
      row.url,
      { method: "POST", headers: { ...headers, "content-type": "application/json", "user-agent": "edge-platform-surveys/1" }, body: delivery.payload },
      { ...ssrfOptions(env), timeoutMs: DELIVERY_TIMEOUT_MS },
    );
    status = response.status;
    await response.body?.cancel();
    if (response.ok) {
      await db
        .update(surveyWebhookDeliveries)
        .set({ status: "delivered", attempts: delivery.attempts + 1, lastStatus: status, lastError: null, deliveredAt: nowIso() })
        .where(eq(surveyWebhookDeliveries.id, delivery.id));
      return { kind: "done" };
    }
    error = `receiver answered ${status}`;
  } catch (e) {
    error = e instanceof BlockedUrlError ? e.message : `request failed: ${String((e as Error)?.message ?? e)}`;
    if (e instanceof BlockedUrlError) attempt = MAX_DELIVERY_ATTEMPTS; // a refused URL will not get better
  }
  const final = attempt >= MAX_DELIVERY_ATTEMPTS;
  await db
    .update(surveyWebhookDeliveries)
    .set({ status: final ? "failed" : "pending", attempts: delivery.attempts + 1, lastStatus: status, lastError: error })
    .where(eq(surveyWebhookDeliveries.id, delivery.id));
  return final ? { kind: "done" } : { kind: "retry" };
}

export async function consumeSurveyWebhooks(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const body = message.body as Partial<SurveyWebhookMessage> | null;
    if (!body || typeof body.delivery_id !== "string") {
      message.ack();
      continue;
    }
    try {
      const outcome = await deliver(env, body.delivery_id, message.attempts);
      if (outcome.kind === "done") message.ack();
      else message.retry({ delaySeconds: backoffSeconds(message.attempts) });
    } catch (error) {
      console.error(JSON.stringify({ msg: "survey webhook delivery error", delivery_id: body.delivery_id, error: String(error) }));
      message.retry({ delaySeconds: backoffSeconds(message.attempts) });
    }
  }
}
