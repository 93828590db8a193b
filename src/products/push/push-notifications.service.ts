// Push notifications: accept one (defaults from the app's settings, payload size, recipients
// counted, one `push` quota unit per recipient, fan-out queued; nothing is sent inside the
// request), list them, and read one with its per-subscriber delivery results. The notification
// row is D1's (one per send); the recipients, the delivery rows, the counts and the completion
// answer from the app's store. The fan-out and the sends are push.consumer.ts.
import { settings as appSettings } from "../../platform/config";
import { and, desc, eq } from "drizzle-orm";
import type { z } from "@hono/zod-openapi";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { pushNotifications, type PushTarget } from "../../db/schema";
import { nowIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { accept } from "../../platform/jobs/accept";
import type { QuotaOwner } from "../../platform/quota";
import { orNotFound } from "../../platform/tenancy";
import { loadApp } from "./push-apps.service";
import type { PushQueueMessage } from "./push.consumer";
import { inStore, pushStore } from "./push.store";
import { PUSH_LIMITS, type NotificationQuery, type SendSchema } from "./push.schemas";

export const notificationNotFound = () => new ApiError("not_found", "Notification not found");

type NotificationRow = typeof pushNotifications.$inferSelect;

/**
 * Accepts a notification: resolves defaults from the app's settings, checks the payload fits one
 * push message, counts the recipients, then the accept step (platform/jobs/accept.ts): one `push`
 * quota unit per recipient, the row, the fan-out's queue message (a refusal is logged; the sweep
 * starts the fan-out). Nothing is sent inside the request.
 */
export async function sendNotification(env: Env, owner: QuotaOwner, appId: string, input: z.infer<typeof SendSchema>) {
  const app = await loadApp(env, owner.teamId, appId);
  const settings = app.settings as Record<string, unknown>;
  const id = crypto.randomUUID();
  const payload = JSON.stringify({
    notification_id: id,
    app_id: app.id,
    title: input.title,
    body: input.body,
    icon: input.icon ?? (settings.default_icon as string | undefined) ?? null,
    url: input.url ?? (settings.default_url as string | undefined) ?? null,
    data: input.data ?? null,
  });
  const size = new TextEncoder().encode(payload).byteLength;
  if (size > PUSH_LIMITS.MAX_PAYLOAD_BYTES) {
    throw ApiError.validation({ payload: [`is ${size} bytes once encoded; the maximum is ${PUSH_LIMITS.MAX_PAYLOAD_BYTES}`] });
  }
  const db = getDb(env.DB);
  const target: PushTarget = input.subscriber_ids
    ? { type: "subscribers", subscriber_ids: [...new Set(input.subscriber_ids)] }
    : input.tags
      ? { type: "tags", tags: [...new Set(input.tags)] }
      : { type: "all" };
  const createdAt = nowIso();
  // The app's store counts the recipients (and names listed ids that are not its subscribers).
  const { count: recipients, unknown } = await inStore(() => pushStore(env, app.id).recipients(target, createdAt));
  if (unknown.length) throw ApiError.validation({ subscriber_ids: [`unknown subscriber ids: ${unknown.slice(0, 20).join(", ")}`] });
  // A notification that reaches nobody is refused rather than stored free (issue 37: stored rows
  // with no unit spent would grow a team's D1 share for nothing).
  if (recipients === 0) throw ApiError.validation({ recipients: ["the notification reaches no subscriber"] });
  const row: NotificationRow = {
    id,
    teamId: owner.teamId,
    appId: app.id,
    payload,
    ttl: input.ttl ?? (settings.default_ttl as number | undefined) ?? 86_400,
    urgency: input.urgency ?? (settings.default_urgency as NotificationRow["urgency"] | undefined) ?? "normal",
    topic: input.topic ?? null,
    target,
    vapidSubject: (settings.vapid_subject as string | undefined) ?? (owner.ownerEmail ? `mailto:${owner.ownerEmail}` : appSettings(env).appUrl),
    recipients,
    fanoutDone: recipients === 0,
    fanoutToken: recipients === 0 ? null : crypto.randomUUID(),
    fanoutAt: createdAt,
    createdAt,
    completedAt: recipients === 0 ? createdAt : null,
  };
  await accept({
    name: "push notification",
    env,
    quota: { owner, service: "push", units: recipients },
    store: () => db.insert(pushNotifications).values(row),
    // A refused message leaves the fan-out unstarted: the minute sweep (push.cron.ts) starts it.
    enqueue: async () => {
      if (recipients > 0) await env.PUSH_QUEUE.send({ kind: "fanout", notification_id: id, after: null, token: row.fanoutToken! } satisfies PushQueueMessage);
    },
  });
  return toNotification(row, NOTHING);
}

type Counts = Partial<Record<string, number>>;

/** What the app's store knows of a notification: its delivery rows per status, and its completion. */
interface Summary {
  counts: Counts;
  completedAt: string | null;
}

function toNotification(row: NotificationRow, summary: Summary) {
  const byStatus = summary.counts;
  const delivered = byStatus.delivered ?? 0;
  const failed = byStatus.failed ?? 0;
  const removed = byStatus.removed ?? 0;
  const started = Object.values(byStatus).some((n) => (n ?? 0) > 0);
  const completedAt = row.completedAt ?? summary.completedAt;
  return {
    id: row.id,
    app_id: row.appId,
    status: completedAt ? ("completed" as const) : started ? ("sending" as const) : ("queued" as const),
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    ttl: row.ttl,
    urgency: row.urgency,
    topic: row.topic,
    target: row.target as Record<string, unknown>,
    recipients: row.recipients,
    counts: { queued: Math.max(0, row.recipients - delivered - failed - removed), delivered, failed, removed },
    created_at: row.createdAt,
    completed_at: completedAt,
  };
}

const NOTHING: Summary = { counts: {}, completedAt: null };

/** The store's summaries of an app's notifications: one call for the whole page. */
async function summariesOf(env: Env, appId: string, ids: string[]): Promise<Map<string, Summary>> {
  if (ids.length === 0) return new Map();
  const rows = await inStore(() => pushStore(env, appId).summaries(ids));
  return new Map(rows.map((r) => [r.id, r]));
}

export async function listNotifications(env: Env, teamId: string, appId: string, limit: number) {
  await loadApp(env, teamId, appId);
  const rows = await getDb(env.DB)
    .select()
    .from(pushNotifications)
    .where(and(eq(pushNotifications.appId, appId), eq(pushNotifications.teamId, teamId)))
    .orderBy(desc(pushNotifications.createdAt), desc(pushNotifications.id))
    .limit(limit);
  const summaries = await summariesOf(
    env,
    appId,
    rows.map((row) => row.id),
  );
  return rows.map((row) => toNotification(row, summaries.get(row.id) ?? NOTHING));
}

export async function getNotification(env: Env, teamId: string, appId: string, id: string, query: z.infer<typeof NotificationQuery>) {
  await loadApp(env, teamId, appId);
  const rows = await getDb(env.DB)
    .select()
    .from(pushNotifications)
    .where(and(eq(pushNotifications.id, id), eq(pushNotifications.appId, appId), eq(pushNotifications.teamId, teamId)))
    .limit(1);
  const row = orNotFound(rows[0], notificationNotFound);
  const store = pushStore(env, appId);
  const [summaries, results] = await inStore(() =>
    Promise.all([store.summaries([id]), store.results(id, { status: query.status, cursor: query.cursor, limit: query.limit + 1 })]),
  );
  const page = results.slice(0, query.limit);
  return {
    ...toNotification(row, summaries[0] ?? NOTHING),
    results: page.map((r) => ({
      subscriber_id: r.subscriber_id,
      status: r.status,
      attempts: r.attempts,
      status_code: r.status_code,
      error: r.error,
      updated_at: r.updated_at,
    })),
    results_next_cursor: results.length > query.limit ? page[page.length - 1].subscriber_id : null,
  };
}
