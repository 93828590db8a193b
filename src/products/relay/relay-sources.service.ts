// Webhook relay sources over the database: create, list, read, change, delete (with the source's
// store, store/relay-store.ts), and the team-scoped look-up the destination, event and replay
// services start from. Every query filters on the team; no Hono context here.
import { settings } from "../../platform/config";
import { log } from "../../platform/log";
import { insertUnderCap } from "../../platform/caps";
import { ApiError } from "../../platform/errors";
import { desc } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb, type Db } from "../../db/client";
import { webhookSources } from "../../db/schema";
import { nowIso } from "../../platform/clock";
import { encryptSecret, randomToken } from "../../platform/crypto";
import { ownedBy, ownedRow, orNotFound } from "../../platform/tenancy";
import { destinationsCountSql } from "./relay.queries";
import type { CreateSourceBody, PatchSourceBody, Provider } from "./relay.schemas";
import { RelayErrors } from "./relay.service";
import { forgetIngestSource } from "./relay.ingest";
import { relayStore } from "./relay.store";
import type { z } from "@hono/zod-openapi";

type SourceRow = typeof webhookSources.$inferSelect;

export function ingestUrl(appUrl: string, slug: string): string {
  return `${appUrl}/in/${slug}`;
}

export function sourceView(row: SourceRow, destinationsCount: number, appUrl: string) {
  return {
    id: row.id,
    name: row.name,
    provider: row.provider as Provider,
    slug: row.slug,
    url: ingestUrl(appUrl, row.slug),
    destinations_count: destinationsCount,
    enabled: row.enabled,
    retention_days: row.retentionDays,
    signature_verification: row.signingSecret !== null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export async function createSource(env: Env, teamId: string, input: z.infer<typeof CreateSourceBody>) {
  const at = nowIso();
  const row: SourceRow = {
    id: crypto.randomUUID(),
    teamId,
    name: input.name,
    provider: input.provider,
    // 18 random bytes: 24 URL-safe characters, 144 bits; the slug is the only thing guarding an
    // unsigned source, so it must not be guessable.
    slug: randomToken(18),
    signingSecret: input.signing_secret ? await encryptSecret(env.ENCRYPTION_KEY, input.signing_secret) : null,
    retentionDays: input.retention_days,
    enabled: input.enabled,
    createdAt: at,
    updatedAt: at,
  };
  // Every source is a public ingest address: a team holds a bounded number (held under parallel creates).
  if (!(await insertUnderCap(getDb(env.DB), webhookSources, row, { column: webhookSources.teamId, value: teamId }, MAX_SOURCES_PER_TEAM))) {
    throw ApiError.validation({ name: [`a team can have at most ${MAX_SOURCES_PER_TEAM} sources`] });
  }
  return sourceView(row, 0, settings(env).appUrl);
}

/** Webhook sources per team. */
export const MAX_SOURCES_PER_TEAM = 100;

export async function listSources(env: Env, teamId: string) {
  const rows = await getDb(env.DB)
    .select({ source: webhookSources, count: destinationsCountSql })
    .from(webhookSources)
    .where(ownedBy(webhookSources, teamId))
    .orderBy(desc(webhookSources.createdAt), desc(webhookSources.id));
  return rows.map((r) => sourceView(r.source, Number(r.count), settings(env).appUrl));
}

/** The team's source, or the relay's 404: what every route under a source checks first. */
export async function loadSource(db: Db, teamId: string, sourceId: string): Promise<SourceRow> {
  const [row] = await db
    .select()
    .from(webhookSources)
    .where(ownedRow(webhookSources, teamId, sourceId))
    .limit(1);
  return orNotFound(row, RelayErrors.source);
}

export async function getSource(env: Env, teamId: string, sourceId: string) {
  const [row] = await getDb(env.DB)
    .select({ source: webhookSources, count: destinationsCountSql })
    .from(webhookSources)
    .where(ownedRow(webhookSources, teamId, sourceId))
    .limit(1);
  const found = orNotFound(row, RelayErrors.source);
  return sourceView(found.source, Number(found.count), settings(env).appUrl);
}

export async function patchSource(env: Env, teamId: string, sourceId: string, input: z.infer<typeof PatchSourceBody>) {
  const db = getDb(env.DB);
  const changes: Partial<SourceRow> = { updatedAt: nowIso() };
  if (input.name !== undefined) changes.name = input.name;
  if (input.enabled !== undefined) changes.enabled = input.enabled;
  if (input.retention_days !== undefined) changes.retentionDays = input.retention_days;
  if (input.signing_secret !== undefined) {
    changes.signingSecret = input.signing_secret === null ? null : await encryptSecret(env.ENCRYPTION_KEY, input.signing_secret);
  }
  const [row] = await db
    .update(webhookSources)
    .set(changes)
    .where(ownedRow(webhookSources, teamId, sourceId))
    .returning({ id: webhookSources.id });
  orNotFound(row, RelayErrors.source);
  forgetIngestSource(sourceId);
  // The store's retention alarm purges with the new setting (ingest hands it over too).
  if (input.retention_days !== undefined) await relayStore(env, sourceId).setRetention(sourceId, input.retention_days);
  return getSource(env, teamId, sourceId);
}

/**
 * Deletes a source: its D1 rows first (the ingest address stops answering, destinations go by
 * cascade), then every event of its store. Should the store not answer, its retention alarm still
 * removes the events within the source's retention.
 */
export async function deleteSource(env: Env, teamId: string, sourceId: string): Promise<void> {
  const [row] = await getDb(env.DB)
    .delete(webhookSources)
    .where(ownedRow(webhookSources, teamId, sourceId))
    .returning({ id: webhookSources.id });
  orNotFound(row, RelayErrors.source);
  forgetIngestSource(sourceId);
  try {
    await relayStore(env, sourceId).destroy();
  } catch (error) {
    log.error("relay: deleting a source's store failed", { source_id: sourceId, error: String(error) });
  }
}
