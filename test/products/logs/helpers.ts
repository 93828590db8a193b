// Shared set-up of the Logs tests: a team with a project, and ingest calls with its token.
import { env, runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import { logStore } from "../../../src/products/logs/logs.store";
import { call, json, setupTeam, type TestTeam } from "../../helpers/api";

export interface LogsFixture extends TestTeam {
  projectId: string;
  token: string;
}

/** A team (every scope unless told otherwise) with one log project. */
export async function setupProject(options: { plan?: string; daily_limit_mb?: number; retention_days?: number; scopes?: string[] } = {}): Promise<LogsFixture> {
  const team = await setupTeam({ plan: options.plan, scopes: options.scopes });
  const body: Record<string, unknown> = { name: "api" };
  if (options.daily_limit_mb !== undefined) body.daily_limit_mb = options.daily_limit_mb;
  if (options.retention_days !== undefined) body.retention_days = options.retention_days;
  const res = await call("POST", "logs/projects", { key: team.key, body });
  expect(res.status).toBe(201);
  const project = (await json(res)).data;
  return { ...team, projectId: project.id, token: project.ingest_token };
}

/** POST /logs/ingest with an ingest token. */
export function ingest(token: string | null, entry: unknown): Promise<Response> {
  return call("POST", "logs/ingest", { key: token, body: entry });
}

/** POST /logs/ingest/batch with a raw NDJSON body. */
export function ingestBatch(token: string | null, ndjson: string | Uint8Array): Promise<Response> {
  return call("POST", "logs/ingest/batch", { key: token, raw: ndjson as BodyInit, headers: { "content-type": "application/x-ndjson" } });
}

export function ndjson(entries: unknown[]): string {
  return entries.map((entry) => JSON.stringify(entry)).join("\n");
}

/** Every entry of a project, newest first (follows the cursor). */
export async function allEntries(fixture: LogsFixture, query = ""): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const qs: string = `limit=1000${query ? `&${query}` : ""}${cursor ? `&cursor=${cursor}` : ""}`;
    const res = await call("GET", `logs/projects/${fixture.projectId}/entries?${qs}`, { key: fixture.key });
    expect(res.status).toBe(200);
    const body = await json(res);
    out.push(...body.data);
    cursor = body.pagination.next_cursor;
  } while (cursor);
  return out;
}

/** Entries held by a project's store. */
export function entryCount(fixture: { projectId: string }): Promise<number> {
  return logStore(env, fixture.projectId).count();
}

/**
 * Runs `fn` while a trigger exists inside a project's store (e.g. one that makes an insert fail as a
 * full disk would): `create` is its CREATE TRIGGER statement, `name` its name.
 */
export async function withStoreTrigger<T>(projectId: string, name: string, create: string, fn: () => Promise<T>): Promise<T> {
  const stub = logStore(env, projectId);
  await runInDurableObject(stub, (_instance, state) => void state.storage.sql.exec(create));
  try {
    return await fn();
  } finally {
    await runInDurableObject(stub, (_instance, state) => void state.storage.sql.exec(`DROP TRIGGER ${name}`));
  }
}
