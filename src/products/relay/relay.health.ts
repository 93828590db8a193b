// Destination health (issue 18): each attempt's outcome keeps `failing_since` on the destination
// (the first failure of the current run of failures, cleared by any success); a failure when every
// attempt has failed for five days disables the destination (`enabled` false, `disabled_reason`
// 'failing') and emails the team's owner once, through the platform mail helper.
import { settings } from "../../platform/config";
import { log } from "../../platform/log";
import { and, eq, isNotNull, isNull } from "drizzle-orm";
import type { Env } from "../../env";
import type { Db } from "../../db/client";
import { webhookDestinations } from "../../db/schema";
import { queuePlatformMail, tenantText, type MailContent } from "../../platform/platform-mail";
import { DISABLE_AFTER_FAILING_MS } from "./relay.retry";

/** True when a destination failing since `failingSince` has failed for five days or more. */
export function isFailingTooLong(failingSince: string | null, nowMs: number): boolean {
  if (!failingSince) return false;
  const since = Date.parse(failingSince);
  return Number.isFinite(since) && nowMs - since >= DISABLE_AFTER_FAILING_MS;
}

/** True when an attempt's outcome changes its destination's health (a success after failures, a first failure, the disabling). */
export function healthChanges(failingSince: string | null, outcome: { success: boolean; disable: boolean }): boolean {
  return outcome.success ? failingSince !== null : failingSince === null || outcome.disable;
}

/**
 * Records an attempt's outcome on its destination (one batch); true when this call disabled it.
 * The disabling statement changes the row only if it was still enabled, so the owner is told once
 * even when several deliveries fail at the same moment.
 */
export async function recordHealth(db: Db, destinationId: string, outcome: { success: boolean; disable: boolean; at: string }): Promise<boolean> {
  const [first, ...rest] = destinationHealthStatements(db, destinationId, outcome);
  const results = await db.batch([first!, ...rest]);
  const disabled = results[results.length - 1];
  return outcome.disable && Array.isArray(disabled) && disabled.length > 0;
}

/** The statements that record an attempt's outcome on its destination; when `disable`, the last one disables it and RETURNS its id only if it was still enabled. */
function destinationHealthStatements(db: Db, destinationId: string, outcome: { success: boolean; disable: boolean; at: string }) {
  const byId = eq(webhookDestinations.id, destinationId);
  if (outcome.success)
    return [
      db
        .update(webhookDestinations)
        .set({ failingSince: null })
        .where(and(byId, isNotNull(webhookDestinations.failingSince))),
    ];
  const statements = [
    db
      .update(webhookDestinations)
      .set({ failingSince: outcome.at })
      .where(and(byId, isNull(webhookDestinations.failingSince))),
  ];
  if (!outcome.disable) return statements;
  return [
    ...statements,
    db
      .update(webhookDestinations)
      .set({ enabled: false, disabledReason: "failing", updatedAt: outcome.at })
      .where(and(byId, eq(webhookDestinations.enabled, true)))
      .returning({ id: webhookDestinations.id }),
  ];
}

export interface DisabledDestination {
  teamId: string;
  ownerEmail: string | null;
  sourceId: string;
  destinationId: string;
  url: string;
  failingSince: string;
}

/** The notice's mail: the destination URL is tenant text (`tenantText`, the one rule of platform mail). */
export function destinationDisabledMail(appUrl: string, disabled: DisabledDestination): MailContent {
  const api = `${appUrl}/api/v1/webhooks/sources/${disabled.sourceId}`;
  const url = tenantText(disabled.url);
  return {
    subject: `Webhook destination disabled after 5 days of failures: ${url}`,
    text:
      `Every delivery attempt to the webhook destination ${url} (id ${disabled.destinationId}, ` +
      `source ${disabled.sourceId}) has failed since ${disabled.failingSince}, so the relay has disabled it. ` +
      `Events received meanwhile are stored but not forwarded to it.\n\n` +
      `When the endpoint works again, enable it (PATCH ${api}/destinations/${disabled.destinationId} ` +
      `with {"enabled": true}) and resend the events it missed to it alone (POST ` +
      `${api}/events/<event_id>/replay with {"destination_ids": ["${disabled.destinationId}"]}).`,
  };
}

/** Tells the team's owner that a destination was disabled, and how to turn it back on. */
export async function notifyDestinationDisabled(env: Env, disabled: DisabledDestination): Promise<void> {
  if (!disabled.ownerEmail) return;
  try {
    // An operational notice to the owner, like the usage warnings: it consumes no mail quota.
    await queuePlatformMail(env, {
      teamId: disabled.teamId,
      kind: "relay_destination_disabled",
      to: disabled.ownerEmail,
      ...destinationDisabledMail(settings(env).appUrl, disabled),
    });
  } catch (error) {
    // The destination stays disabled and visible as such in the API; the notice is best effort.
    log.error("relay: disabled-destination notice failed", { destination_id: disabled.destinationId, error: String(error) });
  }
}
