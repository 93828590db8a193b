// Analytics sites over D1: create (under the team's cap), list, read, change, delete (with the
// site's store), and the ingest's look-up of a site by id, cached per isolate. Every query of the
// API filters on the team; no Hono context here.
import { desc, eq } from "drizzle-orm";
import type { z } from "@hono/zod-openapi";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { analyticsSites, teams } from "../../db/schema";
import { insertUnderCap } from "../../platform/caps";
import { nowIso } from "../../platform/clock";
import { settings } from "../../platform/config";
import { ApiError } from "../../platform/errors";
import { IsolateCache } from "../../platform/isolate-cache";
import { log } from "../../platform/log";
import { ownedBy, ownedRow, orNotFound, uuidOr404 } from "../../platform/tenancy";
import { analyticsStore } from "./analytics.store";
import { MAX_SITES_PER_TEAM, type CreateSiteBody, type PatchSiteBody } from "./analytics.schemas";

type SiteRow = typeof analyticsSites.$inferSelect;

export const AnalyticsErrors = {
  site: () => ApiError.notFound("Site not found"),
};

/** The script tag of a site: Plausible's snippet shape, served by this platform. */
export function snippetOf(appUrl: string, siteId: string): string {
  return `<script defer data-domain="${siteId}" data-api="${appUrl}/api/event" src="${appUrl}/a/script.js"></script>`;
}

export function siteView(row: SiteRow, appUrl: string) {
  return {
    id: row.id,
    domain: row.domain,
    keep_query_string: row.keepQueryString,
    snippet: snippetOf(appUrl, row.id),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
export type SiteView = ReturnType<typeof siteView>;

export async function createSite(env: Env, teamId: string, input: z.infer<typeof CreateSiteBody>): Promise<SiteView> {
  const at = nowIso();
  const row: SiteRow = { id: crypto.randomUUID(), teamId, domain: input.domain, keepQueryString: input.keep_query_string, createdAt: at, updatedAt: at };
  // Held under parallel creates: the count and the insert are one statement (platform/caps.ts).
  if (!(await insertUnderCap(getDb(env.DB), analyticsSites, row, { column: analyticsSites.teamId, value: teamId }, MAX_SITES_PER_TEAM))) {
    throw ApiError.validation({ domain: [`a team can have at most ${MAX_SITES_PER_TEAM} sites`] });
  }
  return siteView(row, settings(env).appUrl);
}

export async function listSites(env: Env, teamId: string): Promise<SiteView[]> {
  const rows = await getDb(env.DB)
    .select()
    .from(analyticsSites)
    .where(ownedBy(analyticsSites, teamId))
    .orderBy(desc(analyticsSites.createdAt), desc(analyticsSites.id));
  return rows.map((row) => siteView(row, settings(env).appUrl));
}

/** The team's site, or the product's 404 (another team's id too). */
export async function loadSite(env: Env, teamId: string, siteId: string): Promise<SiteRow> {
  const id = uuidOr404(siteId, AnalyticsErrors.site);
  const [row] = await getDb(env.DB)
    .select()
    .from(analyticsSites)
    .where(ownedRow(analyticsSites, teamId, id))
    .limit(1);
  return orNotFound(row, AnalyticsErrors.site);
}

export async function getSite(env: Env, teamId: string, siteId: string): Promise<SiteView> {
  return siteView(await loadSite(env, teamId, siteId), settings(env).appUrl);
}

export async function patchSite(env: Env, teamId: string, siteId: string, input: z.infer<typeof PatchSiteBody>): Promise<SiteView> {
  const id = uuidOr404(siteId, AnalyticsErrors.site);
  const changes: Partial<SiteRow> = { updatedAt: nowIso() };
  if (input.domain !== undefined) changes.domain = input.domain;
  if (input.keep_query_string !== undefined) changes.keepQueryString = input.keep_query_string;
  const [row] = await getDb(env.DB)
    .update(analyticsSites)
    .set(changes)
    .where(ownedRow(analyticsSites, teamId, id))
    .returning();
  const found = orNotFound(row, AnalyticsErrors.site);
  forgetIngestSite(id);
  return siteView(found, settings(env).appUrl);
}

/** Deletes a site: its row first (its ingest answers 404 from then on), then every event of its store. */
export async function deleteSite(env: Env, teamId: string, siteId: string): Promise<void> {
  const id = uuidOr404(siteId, AnalyticsErrors.site);
  const [row] = await getDb(env.DB)
    .delete(analyticsSites)
    .where(ownedRow(analyticsSites, teamId, id))
    .returning({ id: analyticsSites.id });
  orNotFound(row, AnalyticsErrors.site);
  forgetIngestSite(id);
  try {
    await analyticsStore(env, id).destroy();
  } catch (error) {
    // The store's retention alarm still empties it within the raw-event retention.
    log.error("analytics: deleting a site's store failed", { site_id: id, error: String(error) });
  }
}

/** What the ingest needs of a site: its row, its team's plan and owner (for the `events` units). */
export interface IngestSite {
  site: SiteRow;
  plan: string;
  ownerEmail: string | null;
}

/** How long an isolate serves a site it read: the bound for a change made on another isolate to apply at ingest. */
export const SITE_CACHE_TTL_MS = 10_000;

/**
 * The sites this isolate received events for, by id (unknown ids too, as null, so a flood of
 * events for a deleted site costs no D1 read each): a busy site costs one D1 read per
 * SITE_CACHE_TTL_MS instead of one per event.
 */
const ingestSites = new IsolateCache<IngestSite | { unknown: true }>({
  ttlMs: SITE_CACHE_TTL_MS,
  max: 5_000,
  teamOf: (found) => ("site" in found ? found.site.teamId : ""),
});

export function forgetIngestSite(siteId: string): void {
  ingestSites.delete(siteId);
  ingestSites.forget((_value, key) => key === siteId);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The site an event names, or null when no site has that id. */
export async function findIngestSite(env: Env, siteId: string): Promise<IngestSite | null> {
  if (!UUID.test(siteId)) return null;
  const found = await ingestSites.getOrLoad(siteId, async () => {
    const [row] = await getDb(env.DB)
      .select({ site: analyticsSites, plan: teams.plan, ownerEmail: teams.ownerEmail })
      .from(analyticsSites)
      .innerJoin(teams, eq(teams.id, analyticsSites.teamId))
      .where(eq(analyticsSites.id, siteId))
      .limit(1);
    return row ?? { unknown: true };
  });
  return found && "site" in found ? found : null;
}
