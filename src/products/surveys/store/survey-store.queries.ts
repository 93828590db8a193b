// The SQL of a survey store (store/survey-store.ts), the one place it is written: its summary
// counters (issue 15, moved into the store by issue 27), the statements that add completed
// responses to the grouped counters and read them back, raw because Drizzle cannot say json_each
// or an INSERT ... SELECT ... ON CONFLICT DO UPDATE with grouped additions; and the responses'
// conditional updates (UPDATE ... RETURNING on what the caller read) and list pages. (Not named `*.sql.ts`: wrangler's bundler takes an import ending in `.sql`
// for a text module.)
//
// One statement builder serves the completion and the import (scope: the responses whose ids are
// bound as a JSON list) and the rebuild (scope: every completed response), so the incremental
// counters and a recomputation group exactly the same rows. They run inside the store's
// transaction that marks the response completed, so a completion and its counts commit together.

/** Question types whose scalar answer values are grouped (the others only count as answered). */
const VALUE_TYPES = ["choice", "rating", "scale", "slider", "nps", "yes_no"];
/** Question types whose array / object answers are expanded element by element. */
const ELEMENT_TYPES = ["choice", "multi_choice", "ranking", "matrix"];
const sqlList = (types: string[]) => types.map((t) => `'${t}'`).join(", ");

/** The ids of the survey's current questions of the given types (summary_questions, kept by every caller). */
const questionIds = (types?: string[]) => `SELECT id FROM summary_questions${types ? ` WHERE type IN (${sqlList(types)})` : ""}`;

/** `all`: every completed response. `listed`: the completed responses whose ids ?1 lists (a JSON array). */
export type Scope = "all" | "listed";
const responsesOf = (scope: Scope) => (scope === "all" ? "r.status = 'completed'" : "r.id IN (SELECT value FROM json_each(?1)) AND r.status = 'completed'");

// Both statements walk the responses' answers: json_each over the answers map (a: one row per
// question id), json_each over that answer (v: the row whose key is 'value'), and for array /
// object values json_each over the value (e: its elements). Only the survey's current questions
// count (answers of deleted or generated questions are skipped) and null answers are not answers.

/** Adds the grouped (question, JSON type, value) counts of the scope's answers. */
export const addValuesSql = (scope: Scope) => `
INSERT INTO summary_values (question_id, kind, value, n)
SELECT a.key, v.type,
       CASE WHEN v.type NOT IN ('array', 'object') AND a.key IN (${questionIds(VALUE_TYPES)}) THEN json_quote(v.atom) ELSE '' END,
       COUNT(*)
FROM responses r
JOIN json_each(r.answers) a
JOIN json_each(a.value) v
WHERE ${responsesOf(scope)}
  AND a.type = 'object' AND a.key IN (${questionIds()})
  AND v.key = 'value' AND v.type <> 'null'
GROUP BY 1, 2, 3
ON CONFLICT (question_id, kind, value) DO UPDATE SET n = n + excluded.n`;

/** Adds the grouped string elements of the scope's array and object answers. */
export const addElementsSql = (scope: Scope) => `
INSERT INTO summary_elements (question_id, kind, row_key, item, n, position_sum, first_count)
SELECT a.key, v.type,
       CASE WHEN v.type = 'object' THEN e.key ELSE '' END,
       e.atom,
       COUNT(*),
       SUM(CASE WHEN v.type = 'array' THEN e.key + 1 ELSE 0 END),
       SUM(CASE WHEN v.type = 'array' AND e.key = 0 THEN 1 ELSE 0 END)
FROM responses r
JOIN json_each(r.answers) a
JOIN json_each(a.value) v
JOIN json_each(v.value) e
WHERE ${responsesOf(scope)}
  AND a.type = 'object' AND a.key IN (${questionIds(ELEMENT_TYPES)})
  AND v.key = 'value' AND v.type IN ('array', 'object')
  AND e.type = 'text'
GROUP BY 1, 2, 3, 4
ON CONFLICT (question_id, kind, row_key, item) DO UPDATE
  SET n = n + excluded.n, position_sum = position_sum + excluded.position_sum, first_count = first_count + excluded.first_count`;

export interface ValueRow {
  question_id: string;
  kind: string;
  value: string;
  n: number;
}
export interface ElementRow {
  question_id: string;
  kind: string;
  row_key: string;
  item: string;
  n: number;
  position_sum: number;
  first_count: number;
}

export const READ_VALUES_SQL = "SELECT question_id, kind, value, n FROM summary_values";
export const READ_ELEMENTS_SQL = "SELECT question_id, kind, row_key, item, n, position_sum, first_count FROM summary_elements";

/** The columns of a response as the store hands it out (JSON columns still text). */
export const RESPONSE_COLUMNS =
  "seq, id, status, respondent, answers, path, next_question_id, generated_questions, completion_id, started_at, updated_at, completed_at";

/** Inserts responses given as a JSON array of StoredResponse objects (?1); an id already held is skipped. */
export const INSERT_RESPONSES_SQL = `
INSERT INTO responses (id, status, respondent, answers, path, next_question_id, generated_questions, completion_id, started_at, updated_at, completed_at)
SELECT j.value ->> 'id', j.value ->> 'status', j.value ->> 'respondent', j.value ->> 'answers', j.value ->> 'path', j.value ->> 'next_question_id',
       j.value ->> 'generated_questions', j.value ->> 'completion_id', j.value ->> 'started_at', j.value ->> 'updated_at', j.value ->> 'completed_at'
FROM json_each(?1) j WHERE true
ON CONFLICT (id) DO NOTHING`;

/** The export's page: completed responses after seq ?1, in seq order, at most ?2 (one range of responses_status_idx). */
export const COMPLETED_AFTER_SQL = `SELECT ${RESPONSE_COLUMNS} FROM responses WHERE status = 'completed' AND seq > ? ORDER BY seq LIMIT ?`;

// The store's own statements (survey-store.ts): a response read, answered and completed under a
// condition on what the caller read (one conditional UPDATE … RETURNING), the list's page, and the
// question list the counters follow.

/** A response by id (?). */
export const RESPONSE_BY_ID = `SELECT ${RESPONSE_COLUMNS} FROM responses WHERE id = ?`;

/**
 * An answer or a step back (answers, path, next question, generated questions, time; then the id
 * and what the caller read: updated_at, next question, path), only while the response still holds it.
 */
export const UPDATE_RESPONSE = `UPDATE responses SET answers = ?, path = ?, next_question_id = ?, generated_questions = ?, updated_at = ?
           WHERE id = ? AND status = 'in_progress' AND updated_at = ? AND next_question_id IS ? AND path = ? RETURNING seq`;

/** Completes an in-progress response (completion id, completed_at, updated_at, id); a row only for the one call that wins. */
export const COMPLETE_RESPONSE = `UPDATE responses SET status = 'completed', completion_id = ?, completed_at = ?, updated_at = ?, next_question_id = NULL
           WHERE id = ? AND status = 'in_progress' RETURNING seq`;

/** The WHERE clause (empty for none) and parameters of the list's filter. */
export function responseWhere(filter: { status?: string; since?: string; until?: string }): { clause: string; params: string[] } {
  const where: string[] = [];
  const params: string[] = [];
  const add = (condition: string, value: string | undefined) => {
    if (value === undefined) return;
    where.push(condition);
    params.push(value);
  };
  add("status = ?", filter.status);
  add("started_at >= ?", filter.since);
  add("started_at < ?", filter.until);
  return { clause: where.length ? `WHERE ${where.join(" AND ")}` : "", params };
}

/** A page of responses under `clause` (responseWhere's), newest first (ties: the later insert first): its parameters, then limit and offset. */
export function responsePageSql(clause: string): string {
  return `SELECT ${RESPONSE_COLUMNS} FROM responses ${clause} ORDER BY started_at DESC, seq DESC LIMIT ? OFFSET ?`;
}

/** The responses under `clause` (responseWhere's), counted. */
export function countResponsesSql(clause: string): string {
  return `SELECT count(*) AS n FROM responses ${clause}`;
}

/** INSERT_RESPONSES_SQL, answering the inserted rows' ids and statuses. */
export const INSERT_RESPONSES_RETURNING = `${INSERT_RESPONSES_SQL} RETURNING id, status`;

/** Completions whose D1 side is still to be written, counted. */
export const COUNT_PENDING_PUBLISH = "SELECT count(*) AS n FROM pending_publish";

/** The question list the counters follow (?: one bound JSON list of {id, type}: a survey has up to 200 questions, a statement takes 100 values). */
export const SET_SUMMARY_QUESTIONS = "INSERT INTO summary_questions (id, type) SELECT value ->> 'id', value ->> 'type' FROM json_each(?)";

/** The counters of questions no longer in the list. */
export const DROP_ORPHAN_VALUES = "DELETE FROM summary_values WHERE question_id NOT IN (SELECT id FROM summary_questions)";
export const DROP_ORPHAN_ELEMENTS = "DELETE FROM summary_elements WHERE question_id NOT IN (SELECT id FROM summary_questions)";

/** Every counter (a rebuild starts from none). */
export const CLEAR_VALUES = "DELETE FROM summary_values";
export const CLEAR_ELEMENTS = "DELETE FROM summary_elements";

/** The counts recomputed from the responses held. */
export const RECOUNT_STATE = `UPDATE state SET in_progress = (SELECT count(*) FROM responses WHERE status = 'in_progress'),
                        completed = (SELECT count(*) FROM responses WHERE status = 'completed')`;
