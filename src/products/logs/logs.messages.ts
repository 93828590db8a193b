// The Logs product's queue messages (alert-notifications, log-alert-checks): a leaf file, so
// src/env.ts types the queues without importing the consumers.
import { z } from "zod";
import { ALERT_CHANNELS } from "../../db/schema/logs";
import { rowId } from "../../platform/jobs/row-id";
import { defineQueue } from "../../platform/jobs/queues";

/** Projects per log-alert-checks message: one message makes this many store RPCs, in parallel. */
export const PROJECTS_PER_CHECK = 50;

/** One message of the alert-notifications queue: one (firing, channel), fired or resolved. */
export const alertNotification = z.object({
  /** What happened: the alert fired (the default, also for messages queued before resolves existed) or its firing resolved. */
  kind: z.enum(["triggered", "resolved"]).optional(),
  firing_id: rowId,
  alert_id: rowId,
  team_id: rowId,
  channel: z.enum(ALERT_CHANNELS),
  count: z.number().int().nonnegative(),
  window_start: z.iso.datetime(),
  triggered_at: z.iso.datetime(),
  /** Set on "resolved": when the window was found back under the threshold. */
  resolved_at: z.iso.datetime().optional(),
});
export type AlertNotification = z.infer<typeof alertNotification>;

/** One message of the log-alert-checks queue: projects to check as of `at` (ms). */
export const alertCheck = z.object({
  at: z.number().int().nonnegative(),
  // The cron run groups PROJECTS_PER_CHECK a message; each is one store RPC and one bound parameter.
  project_ids: z.array(rowId).max(PROJECTS_PER_CHECK),
});
export type AlertCheck = z.infer<typeof alertCheck>;

/** The queue of `AlertNotification` (wrangler.toml: max_retries = 5). */
export const alertNotificationsQueue = defineQueue({ name: "alert-notifications", binding: "ALERT_QUEUE", maxRetries: 5 });
/** The queue of `AlertCheck` (wrangler.toml: max_retries = 2). */
export const alertChecksQueue = defineQueue({ name: "log-alert-checks", binding: "ALERT_CHECK_QUEUE", maxRetries: 2 });

// The producer binding carries the message type, so a producer sending anything else fails the
// type-check (wrangler's generated types know only `Queue`).
declare module "../../env" {
  interface Env {
    ALERT_QUEUE: Queue<AlertNotification>;
    ALERT_CHECK_QUEUE: Queue<AlertCheck>;
  }
}
