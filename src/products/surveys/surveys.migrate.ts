// The one-time move of survey responses from the former D1 table (`survey_responses`, where every
// survey's responses lived before the per-survey stores) into each survey's store. The operator
// runs it in steps (POST /api/v1/admin/surveys/migrate-responses) until `more` is false. Each step
// reads the oldest rows, imports each survey's share into its store (the store rebuilds the
// summary counters from them over the survey's current questions, in the import's transaction),
// then deletes what was imported. Once no response is left, the steps delete the former summary
// rows (survey_summary_state / _values / _elements), which the stores no longer read. A step that
// stops between import and delete repeats nothing: a store skips the response ids it holds.
// A respondent who comes back to a response not moved yet finds it all the same: it is moved on
// the spot (adoptLegacyResponse).
import { log } from "../../platform/log";
import type { Env } from "../../env";
import { ApiError } from "../../platform/errors";
import type { StoredResponse } from "./store/survey-rows";
import {
  DELETE_LEGACY_RESPONSES,
  deleteLegacySummarySql,
  LEGACY_RESPONSE,
  LEGACY_SUMMARY_TABLES,
  OLDEST_LEGACY_RESPONSES,
  QUESTION_TYPES,
  type SurveyRow,
} from "./surveys.queries";
import { surveyStore } from "./surveys.store";

/** Rows per step: a response holds up to ~200 answers and 8 KB of respondent metadata, so a step stays well inside a Worker's memory. */
export const MIGRATE_MAX_ROWS = 1_000;

/** A row of the former table, as the store keeps it, plus its owner. */
interface LegacyRow extends StoredResponse {
  rowid: number;
  survey_id: string;
  team_id: string;
}

function storedOf(row: LegacyRow): StoredResponse {
  const { rowid: _rowid, survey_id: _survey, team_id: _team, ...stored } = row;
  return stored;
}

/** Imports one survey's legacy rows into its store (over the survey's current questions) and deletes them from D1. */
async function moveRows(env: Env, owner: { surveyId: string; teamId: string }, rows: LegacyRow[]): Promise<number> {
  const { results: questions } = await env.DB.prepare(QUESTION_TYPES).bind(owner.surveyId, owner.teamId).all<{ id: string; type: string }>();
  await surveyStore(env, owner.surveyId).importResponses(owner, rows.map(storedOf), questions);
  await env.DB.prepare(DELETE_LEGACY_RESPONSES)
    .bind(JSON.stringify(rows.map((r) => r.rowid)))
    .run();
  return rows.length;
}

/** A response of the survey still in the former D1 table: moved to the store now and returned, or null. */
export async function adoptLegacyResponse(env: Env, survey: Pick<SurveyRow, "id" | "teamId">, responseId: string): Promise<StoredResponse | null> {
  const row = await env.DB.prepare(LEGACY_RESPONSE).bind(responseId, survey.id, survey.teamId).first<LegacyRow>();
  if (!row) return null;
  await moveRows(env, { surveyId: survey.id, teamId: survey.teamId }, [row]);
  return surveyStore(env, survey.id).get(responseId);
}

/**
 * One step: moves up to `limit` of the oldest D1 responses, or, once none is left, deletes up to
 * `limit` rows of each former summary table. `dropped` counts rows of surveys that no longer exist.
 */
export async function migrateLegacyResponses(env: Env, limit: number): Promise<{ moved: number; dropped: number; more: boolean }> {
  const { results } = await env.DB.prepare(OLDEST_LEGACY_RESPONSES).bind(limit).all<LegacyRow & { live: string | null }>();
  if (results.length === 0) return { moved: 0, dropped: 0, more: await deleteSummaryRows(env, limit) };

  const bySurvey = new Map<string, LegacyRow[]>();
  const orphans: number[] = [];
  for (const { live, ...row } of results) {
    if (live === null) orphans.push(row.rowid);
    else bySurvey.set(row.survey_id, [...(bySurvey.get(row.survey_id) ?? []), row]);
  }
  if (orphans.length) await env.DB.prepare(DELETE_LEGACY_RESPONSES).bind(JSON.stringify(orphans)).run();
  const moved = await Promise.allSettled([...bySurvey.values()].map((rows) => moveRows(env, { surveyId: rows[0].survey_id, teamId: rows[0].team_id }, rows)));
  const failed = moved.find((result) => result.status === "rejected");
  if (failed) {
    log.error("survey response migration: a store did not answer", { error: String((failed as PromiseRejectedResult).reason) });
    throw new ApiError("unavailable", "A survey store did not answer; what was moved is recorded, run the step again");
  }
  const count = moved.reduce((sum, result) => sum + (result.status === "fulfilled" ? result.value : 0), 0);
  // More while this step was full, or while the former summary rows are still to be deleted.
  return { moved: count, dropped: orphans.length, more: true };
}

/** Deletes up to `limit` rows of each former summary table; whether any is left. */
async function deleteSummaryRows(env: Env, limit: number): Promise<boolean> {
  const results = await env.DB.batch(LEGACY_SUMMARY_TABLES.map((table) => env.DB.prepare(deleteLegacySummarySql(table)).bind(limit)));
  return results.some((r) => r.meta.changes === limit);
}
