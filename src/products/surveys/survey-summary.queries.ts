// The SQL of the incrementally kept survey summary (issue 15): the statements that add one
// completed response to the grouped counters, rebuild a survey's counters from its stored
// responses, and read them back. Raw SQL because Drizzle cannot say json_each or an
// INSERT ... SELECT ... ON CONFLICT DO UPDATE with grouped additions. (Not named `*.sql.ts`:
// wrangler's bundler takes an import ending in `.sql` for a text module.)
//
// One statement builder serves both the completion (scope: the one response that just completed)
// and the rebuild (scope: every completed response of the survey), so the incremental counters and
// a recomputation group exactly the same rows. Additions are `n = n + excluded.n` upserts inside
// the completion's own D1 batch: concurrent completions never lose a count, and only the call that
// won the completion adds anything.

/** Question types whose scalar answer values are grouped (the others only count as answered). */
const VALUE_TYPES = ["choice", "rating", "scale", "slider", "nps", "yes_no"];
/** Question types whose array / object answers are expanded element by element. */
const ELEMENT_TYPES = ["choice", "multi_choice", "ranking", "matrix"];
const sqlList = (types: string[]) => types.map((t) => `'${t}'`).join(", ");

/** The ids of the survey's current questions of the given types, as an SQL subquery (?1 survey, ?2 team). */
const questionIds = (types?: string[]) =>
  `SELECT id FROM survey_questions WHERE survey_id = ?1 AND team_id = ?2${types ? ` AND type IN (${sqlList(types)})` : ""}`;

/**
 * Which responses a statement adds up. `survey`: every completed response (?1 survey, ?2 team).
 * `response`: the one response ?3, only for the call whose completion id ?4 won.
 */
type Scope = "survey" | "response";
const responsesOf = (scope: Scope) =>
  scope === "survey"
    ? "r.survey_id = ?1 AND r.team_id = ?2 AND r.status = 'completed'"
    : "r.id = ?3 AND r.completion_id = ?4 AND r.survey_id = ?1 AND r.team_id = ?2 AND r.status = 'completed'";

// Both statements walk the responses' answers: json_each over the answers map (a: one row per
// question id), json_each over that answer (v: the row whose key is 'value'), and for array /
// object values json_each over the value (e: its elements). Only the survey's current questions
// count (answers of deleted or generated questions are skipped) and null answers are not answers.
// The question-id subqueries do not depend on the row, so SQLite evaluates each once.

/** Adds the grouped (question, JSON type, value) counts of the scope's answers. */
export const addValuesSql = (scope: Scope) => `
INSERT INTO survey_summary_values (survey_id, team_id, question_id, kind, value, n)
SELECT ?1, ?2, a.key, v.type,
       CASE WHEN v.type NOT IN ('array', 'object') AND a.key IN (${questionIds(VALUE_TYPES)}) THEN json_quote(v.atom) ELSE '' END,
       COUNT(*)
FROM survey_responses r
JOIN json_each(r.answers) a
JOIN json_each(a.value) v
WHERE ${responsesOf(scope)}
  AND a.type = 'object' AND a.key IN (${questionIds()})
  AND v.key = 'value' AND v.type <> 'null'
GROUP BY 3, 4, 5
ON CONFLICT (survey_id, question_id, kind, value) DO UPDATE SET n = n + excluded.n`;

/** Adds the grouped string elements of the scope's array and object answers. */
export const addElementsSql = (scope: Scope) => `
INSERT INTO survey_summary_elements (survey_id, team_id, question_id, kind, row_key, item, n, position_sum, first_count)
SELECT ?1, ?2, a.key, v.type,
       CASE WHEN v.type = 'object' THEN e.key ELSE '' END,
       e.atom,
       COUNT(*),
       SUM(CASE WHEN v.type = 'array' THEN e.key + 1 ELSE 0 END),
       SUM(CASE WHEN v.type = 'array' AND e.key = 0 THEN 1 ELSE 0 END)
FROM survey_responses r
JOIN json_each(r.answers) a
JOIN json_each(a.value) v
JOIN json_each(v.value) e
WHERE ${responsesOf(scope)}
  AND a.type = 'object' AND a.key IN (${questionIds(ELEMENT_TYPES)})
  AND v.key = 'value' AND v.type IN ('array', 'object')
  AND e.type = 'text'
GROUP BY 3, 4, 5, 6
ON CONFLICT (survey_id, question_id, kind, row_key, item) DO UPDATE
  SET n = n + excluded.n, position_sum = position_sum + excluded.position_sum, first_count = first_count + excluded.first_count`;

/** ?1 survey, ?2 team: the three reads of a summary, one consistent snapshot when batched. */
const READ_STATE_SQL = `SELECT in_progress, completed FROM survey_summary_state WHERE survey_id = ?1 AND team_id = ?2`;
const READ_VALUES_SQL = `SELECT question_id, kind, value, n FROM survey_summary_values WHERE survey_id = ?1 AND team_id = ?2`;
const READ_ELEMENTS_SQL = `
SELECT question_id, kind, row_key, item, n, position_sum, first_count
FROM survey_summary_elements WHERE survey_id = ?1 AND team_id = ?2`;

export interface StateRow {
  in_progress: number;
  completed: number;
}
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

export function readStatements(db: D1Database, surveyId: string, teamId: string): D1PreparedStatement[] {
  return [READ_STATE_SQL, READ_VALUES_SQL, READ_ELEMENTS_SQL].map((q) => db.prepare(q).bind(surveyId, teamId));
}

/**
 * Rebuilds a survey's counters from its stored responses, then reads them: one batch, so one
 * transaction. A completion or start that commits before it is counted by it, one after it is
 * added on top of it; nothing is lost or counted twice. The state row is written only while the
 * survey exists (a survey deleted meanwhile leaves nothing behind).
 */
export function rebuildStatements(db: D1Database, surveyId: string, teamId: string, at: string): D1PreparedStatement[] {
  return [
    db.prepare(`DELETE FROM survey_summary_values WHERE survey_id = ?1 AND team_id = ?2`).bind(surveyId, teamId),
    db.prepare(`DELETE FROM survey_summary_elements WHERE survey_id = ?1 AND team_id = ?2`).bind(surveyId, teamId),
    db.prepare(addValuesSql("survey")).bind(surveyId, teamId),
    db.prepare(addElementsSql("survey")).bind(surveyId, teamId),
    db
      .prepare(
        `INSERT INTO survey_summary_state (survey_id, team_id, in_progress, completed, rebuilt_at)
         SELECT s.id, s.team_id,
                (SELECT COUNT(*) FROM survey_responses WHERE survey_id = s.id AND team_id = s.team_id AND status = 'in_progress'),
                (SELECT COUNT(*) FROM survey_responses WHERE survey_id = s.id AND team_id = s.team_id AND status = 'completed'),
                ?3
         FROM surveys s WHERE s.id = ?1 AND s.team_id = ?2
         ON CONFLICT (survey_id) DO UPDATE SET in_progress = excluded.in_progress, completed = excluded.completed, rebuilt_at = excluded.rebuilt_at`,
      )
      .bind(surveyId, teamId, at),
    ...readStatements(db, surveyId, teamId),
  ];
}

/**
 * The statements a completion adds to its batch, after the conditional UPDATE that writes the
 * completion id: they change nothing unless that id won (a repeated or losing call adds nothing).
 */
export function completionStatements(db: D1Database, surveyId: string, teamId: string, responseId: string, completionId: string): D1PreparedStatement[] {
  return [
    db
      .prepare(
        `UPDATE survey_summary_state SET in_progress = in_progress - 1, completed = completed + 1
         WHERE survey_id = ?1 AND team_id = ?2 AND EXISTS (SELECT 1 FROM survey_responses WHERE id = ?3 AND completion_id = ?4)`,
      )
      .bind(surveyId, teamId, responseId, completionId),
    db.prepare(addValuesSql("response")).bind(surveyId, teamId, responseId, completionId),
    db.prepare(addElementsSql("response")).bind(surveyId, teamId, responseId, completionId),
  ];
}
