// Webhook relay destinations over the database: add (SSRF-checked, capped per source), list,
// change, delete (its deliveries in the source's store with it), each under a source of the
// caller's team. Every query filters on the team; no Hono context here.
import { and, asc, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { webhookDestinations } from "../../db/schema";
import { insertUnderCap } from "../../platform/caps";
import { nowIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { assertPublicUrl } from "../../platform/ssrf";
import { settings } from "../../platform/config";
import { ownedBy, ownedRow, orNotFound } from "../../platform/tenancy";
import { newSealedWebhookSecret } from "../../platform/webhook-signature";
import { MAX_DESTINATIONS_PER_SOURCE, type CreateDestinationBody, type PatchDestinationBody } from "./relay.schemas";
import { RelayErrors } from "./relay.service";
import { forgetIngestSource } from "./relay.ingest";
import { relayStore } from "./relay.store";
import { loadSource } from "./relay-sources.service";
import type { z } from "@hono/zod-openapi";

type DestinationRow = typeof webhookDestinations.$inferSelect;

export function destinationView(row: DestinationRow) {
  return {
    id: row.id,
    source_id: row.sourceId,
    url: row.url,
    event_filter: row.eventFilter,
    enabled: row.enabled,
    disabled_reason: row.disabledReason,
    failing_since: row.failingSince,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The host of a URL as it is compared: lower case, without a trailing dot. */
const hostOf = (url: URL) => url.hostname.toLowerCase().replace(/\.$/, "");

/**
 * A destination on our own ingest (`APP_URL`'s host, any port, under `/in/`) would forward each
 * event back into a source, a loop that spends units until something breaks it: refused (422).
 */
function refuseOwnIngest(env: Env, raw: string): void {
  const url = new URL(raw);
  if (hostOf(url) === hostOf(new URL(settings(env).appUrl)) && url.pathname.startsWith("/in/")) {
    throw ApiError.validation({ url: ["must not point to this platform's own ingest addresses (/in/...)"] });
  }
}

export async function createDestination(env: Env, teamId: string, sourceId: string, input: z.infer<typeof CreateDestinationBody>) {
  const db = getDb(env.DB);
  await loadSource(db, teamId, sourceId);
  assertPublicUrl(env, input.url);
  refuseOwnIngest(env, input.url);
  const { secret, sealed } = await newSealedWebhookSecret(env.ENCRYPTION_KEY);
  const at = nowIso();
  const row: DestinationRow = {
    id: crypto.randomUUID(),
    teamId,
    sourceId,
    url: input.url,
    eventFilter: input.event_filter ?? [],
    secret: sealed,
    enabled: input.enabled,
    failingSince: null,
    disabledReason: null,
    createdAt: at,
    updatedAt: at,
  };
  // The cap is part of the insert, so two concurrent creates cannot pass it together.
  if (!(await insertUnderCap(db, webhookDestinations, row, { column: webhookDestinations.sourceId, value: sourceId }, MAX_DESTINATIONS_PER_SOURCE))) {
    throw ApiError.validation({ source_id: [`has reached the limit of ${MAX_DESTINATIONS_PER_SOURCE} destinations`] });
  }
  forgetIngestSource(sourceId);
  return { ...destinationView(row), secret };
}

export async function listDestinations(env: Env, teamId: string, sourceId: string) {
  const db = getDb(env.DB);
  await loadSource(db, teamId, sourceId);
  const rows = await db
    .select()
    .from(webhookDestinations)
    .where(and(ownedBy(webhookDestinations, teamId), eq(webhookDestinations.sourceId, sourceId)))
    .orderBy(asc(webhookDestinations.createdAt), asc(webhookDestinations.id));
  return rows.map(destinationView);
}

function destinationWhere(teamId: string, sourceId: string, destinationId: string) {
  return and(ownedRow(webhookDestinations, teamId, destinationId), eq(webhookDestinations.sourceId, sourceId));
}

export async function patchDestination(env: Env, teamId: string, sourceId: string, destinationId: string, input: z.infer<typeof PatchDestinationBody>) {
  const db = getDb(env.DB);
  await loadSource(db, teamId, sourceId);
  const changes: Partial<DestinationRow> = { updatedAt: nowIso() };
  if (input.url !== undefined) {
    assertPublicUrl(env, input.url);
    refuseOwnIngest(env, input.url);
    changes.url = input.url;
  }
  if (input.event_filter !== undefined) changes.eventFilter = input.event_filter ?? [];
  if (input.enabled !== undefined) {
    // Enabled (or disabled) by its owner: a fresh start, not the tail of the old run of failures.
    changes.enabled = input.enabled;
    changes.failingSince = null;
    changes.disabledReason = null;
  }
  const [row] = await db
    .update(webhookDestinations)
    .set(changes)
    .where(destinationWhere(teamId, sourceId, destinationId))
    .returning();
  forgetIngestSource(sourceId);
  return destinationView(orNotFound(row, RelayErrors.destination));
}

export async function deleteDestination(env: Env, teamId: string, sourceId: string, destinationId: string): Promise<void> {
  const db = getDb(env.DB);
  await loadSource(db, teamId, sourceId);
  const [row] = await db
    .delete(webhookDestinations)
    .where(destinationWhere(teamId, sourceId, destinationId))
    .returning({ id: webhookDestinations.id });
  orNotFound(row, RelayErrors.destination);
  forgetIngestSource(sourceId);
  // Its deliveries and their attempts go with it (a delivery of it claimed later is dropped by the consumer).
  await relayStore(env, sourceId).dropDestination(destinationId);
}
