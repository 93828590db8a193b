// Log projects (ingest tokens stored as SHA-256 hashes) and their streams, and the team-scoped
// project look-up the entry and alert services start from (log-entries.service.ts,
// log-alerts.service.ts). Every query filters on the caller's team; another team's project is
// "not found". Services take `(env, teamId, ...)` and open the database themselves.
import { log } from "../../platform/log";
import { insertUnderCap } from "../../platform/caps";
import { and, asc, eq, gt, type SQL } from "drizzle-orm";
import { getDb, type Db } from "../../db/client";
import type { Env } from "../../env";
import { logProjects, logStreams } from "../../db/schema/logs";
import { nowIso } from "../../platform/clock";
import { randomToken, sha256Hex } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { orNotFound, ownedBy, ownedRow } from "../../platform/tenancy";
import { logStore } from "./logs.store";

export const TOKEN_PREFIX = "lgt_";
const VISIBLE_PREFIX_LENGTH = 12;

export type ProjectRow = typeof logProjects.$inferSelect;

export const projectNotFound = () => new ApiError("not_found", "Project not found");

export function projectView(row: ProjectRow) {
  return {
    id: row.id,
    name: row.name,
    daily_limit_mb: row.dailyLimitMb,
    retention_days: row.retentionDays,
    ingest_token_prefix: row.tokenPrefix,
    stream_count: row.streamCount,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

async function newIngestToken(): Promise<{ token: string; hash: string; prefix: string }> {
  const token = randomToken(32, TOKEN_PREFIX);
  return { token, hash: await sha256Hex(token), prefix: token.slice(0, VISIBLE_PREFIX_LENGTH) };
}

export async function createProject(
  env: Env,
  teamId: string,
  input: { name: string; daily_limit_mb: number; retention_days: number },
): Promise<{ row: ProjectRow; token: string }> {
  const at = nowIso();
  const { token, hash, prefix } = await newIngestToken();
  const row: ProjectRow = {
    id: crypto.randomUUID(),
    teamId,
    name: input.name,
    tokenHash: hash,
    tokenPrefix: prefix,
    dailyLimitMb: input.daily_limit_mb,
    retentionDays: input.retention_days,
    streamCount: 0,
    createdAt: at,
    updatedAt: at,
  };
  // Each project may hold a store of its own (a Durable Object): a team holds a bounded number,
  // checked and written in one statement so parallel creates cannot pass it.
  if (!(await insertUnderCap(getDb(env.DB), logProjects, row, { column: logProjects.teamId, value: teamId }, MAX_PROJECTS_PER_TEAM))) {
    throw ApiError.validation({ name: [`a team can have at most ${MAX_PROJECTS_PER_TEAM} log projects`] });
  }
  return { row, token };
}

/** Log projects per team (held under parallel creates). */
export const MAX_PROJECTS_PER_TEAM = 100;

export async function listProjects(env: Env, teamId: string): Promise<ProjectRow[]> {
  return getDb(env.DB).select().from(logProjects).where(ownedBy(logProjects, teamId)).orderBy(asc(logProjects.createdAt), asc(logProjects.id));
}

/** The team's project, or "Project not found": what every route under a project checks first. */
export async function loadProject(db: Db, teamId: string, id: string): Promise<ProjectRow> {
  return foundProject(await selectProject(db, teamId, id));
}

/** The read of a team's project by id (a batch item; `foundProject` of its rows). */
export function selectProject(db: Db, teamId: string, id: string) {
  return db
    .select()
    .from(logProjects)
    .where(ownedRow(logProjects, teamId, id))
    .limit(1);
}

/** The project of `selectProject`'s rows, or the product's 404. */
export function foundProject(rows: ProjectRow[]): ProjectRow {
  return orNotFound(rows[0], projectNotFound);
}

export async function getProject(env: Env, teamId: string, id: string): Promise<ProjectRow> {
  return loadProject(getDb(env.DB), teamId, id);
}

/** Replaces the token: the old one stops working with this write. */
export async function rotateToken(env: Env, teamId: string, id: string): Promise<{ row: ProjectRow; token: string }> {
  const { token, hash, prefix } = await newIngestToken();
  const [row] = await getDb(env.DB)
    .update(logProjects)
    .set({ tokenHash: hash, tokenPrefix: prefix, updatedAt: nowIso() })
    .where(ownedRow(logProjects, teamId, id))
    .returning();
  return { row: orNotFound(row, projectNotFound), token };
}

/**
 * Deletes a project: its D1 rows first (the token stops working, alerts, streams and counters go
 * by cascade), then every entry of its store. Should the store not answer, its retention alarm
 * still removes the entries within the project's retention.
 */
export async function deleteProject(env: Env, teamId: string, id: string): Promise<void> {
  const db = getDb(env.DB);
  const deleted = await db
    .delete(logProjects)
    .where(ownedRow(logProjects, teamId, id))
    .returning({ id: logProjects.id });
  orNotFound(deleted[0], projectNotFound);
  try {
    await logStore(env, id).destroy();
  } catch (error) {
    log.error("log store delete failed", { project_id: id, error: String(error) });
  }
}

export async function listStreams(env: Env, teamId: string, projectId: string, page: { limit: number; after?: string }) {
  const db = getDb(env.DB);
  return projectStreams(db, await loadProject(db, teamId, projectId), page);
}

/** `listStreams` for a project already loaded under the team: the query, to await or to batch with others. */
export function projectStreams(db: Db, project: Pick<ProjectRow, "id" | "teamId">, page: { limit: number; after?: string }) {
  const conditions: SQL[] = [eq(logStreams.projectId, project.id), eq(logStreams.teamId, project.teamId)];
  if (page.after !== undefined) conditions.push(gt(logStreams.name, page.after));
  return db
    .select({ name: logStreams.name, created_at: logStreams.createdAt })
    .from(logStreams)
    .where(and(...conditions))
    .orderBy(asc(logStreams.name))
    .limit(page.limit);
}
