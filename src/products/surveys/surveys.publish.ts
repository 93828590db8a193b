// The D1 side of a completion, written by the survey's store once the completion has committed
// there (store/survey-store.ts), and again by its alarm while that write has not succeeded: the
// survey's response_count and one delivery row per webhook subscribed to `response.completed`,
// then their queue messages. Idempotent by the response id: the batch's first statement inserts
// the completion's key (survey_completions, primary key response_id) with this attempt's token,
// and every later statement is conditioned on that token, so a repeated or concurrent attempt
// changes nothing. A survey deleted meanwhile takes nothing.
import { and, eq } from "drizzle-orm";
import { getDb } from "../../db/client";
import { surveyWebhooks } from "../../db/schema/surveys";
import type { Env } from "../../env";
import { nowIso } from "../../platform/clock";
import { accept } from "../../platform/jobs/accept";
import { sendAll } from "../../platform/jobs/queues";
import type { StoreOwner } from "./store/survey-rows";
import { COUNT_COMPLETION, INSERT_COMPLETION_DELIVERY, INSERT_COMPLETION_KEY } from "./surveys.queries";

/** Days a completion's key is kept (a retry comes within minutes; the hourly retention deletes it after). */
export const COMPLETION_KEY_DAYS = 7;

/** Writes the D1 side of one completion; returns whether this call wrote it (false: it was there already, or the survey is gone). */
export async function publishCompletion(env: Env, owner: StoreOwner, responseId: string, completedAt: string): Promise<boolean> {
  const hooks = await getDb(env.DB)
    .select({ id: surveyWebhooks.id, events: surveyWebhooks.events })
    .from(surveyWebhooks)
    .where(and(eq(surveyWebhooks.surveyId, owner.surveyId), eq(surveyWebhooks.teamId, owner.teamId)));
  const deliveries = hooks.filter((h) => h.events.includes("response.completed")).map((h) => ({ id: crypto.randomUUID(), webhookId: h.id }));
  const token = crypto.randomUUID();
  // The accept step (platform/jobs/accept.ts), with no quota (the unit is spent by the completion):
  // the rows, then their messages; a refused send is logged, the rows stay pending for the sweep.
  const wrote = await accept({
    name: "survey webhooks",
    env,
    store: async () => {
      const results = await env.DB.batch([
        env.DB.prepare(INSERT_COMPLETION_KEY).bind(responseId, token, owner.surveyId, owner.teamId, nowIso()),
        env.DB.prepare(COUNT_COMPLETION).bind(responseId, token, owner.surveyId, owner.teamId),
        ...deliveries.map((d) =>
          env.DB.prepare(INSERT_COMPLETION_DELIVERY).bind(responseId, token, owner.surveyId, owner.teamId, d.id, d.webhookId, completedAt),
        ),
      ]);
      return results[0].meta.changes === 1;
    },
    enqueue: async (written) => {
      if (written && deliveries.length)
        await sendAll(
          env.SURVEY_QUEUE,
          deliveries.map((d) => ({ delivery_id: d.id })),
        );
    },
  });
  return wrote;
}
