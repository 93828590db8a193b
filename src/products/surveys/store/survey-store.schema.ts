// Tables of one survey's store (a SQLite-backed Durable Object, `SurveyStore`, one per survey):
// its responses (the respondent is embedded in the response, as in the former D1 table), the
// summary counters every completion adds to in its own transaction, the completions whose D1 side
// (response_count, webhook deliveries) is not yet confirmed, and one row of state. Times are ISO
// strings like the API's; `seq` (the rowid) breaks ties in the newest-first list and keys the export.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const responses = sqliteTable(
  "responses",
  {
    seq: integer("seq").primaryKey(),
    id: text("id").notNull().unique(),
    status: text("status").$type<"in_progress" | "completed">().notNull(),
    /** JSON texts, as the API answers them. */
    respondent: text("respondent").notNull(),
    answers: text("answers").notNull(),
    path: text("path").notNull(),
    nextQuestionId: text("next_question_id"),
    generatedQuestions: text("generated_questions").notNull(),
    /** Written by the one completion call that won. */
    completionId: text("completion_id"),
    startedAt: text("started_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [
    // The newest-first list, with and without its status filter (rowid breaks ties inside the index).
    index("responses_started_idx").on(t.startedAt),
    index("responses_status_started_idx").on(t.status, t.startedAt),
    // The export: completed responses in seq order, one index range per page.
    index("responses_status_idx").on(t.status),
  ],
);

/** The survey's current questions the counters are kept for (id and type), as the last caller named them. */
export const summaryQuestions = sqliteTable("summary_questions", {
  id: text("id").primaryKey(),
  type: text("type").notNull(),
});

/**
 * Completed answers grouped per (question, JSON type of the value, value). `value` is the JSON of
 * the value where the summary groups by it (choice, numeric and yes/no questions), '' otherwise.
 */
export const summaryValues = sqliteTable(
  "summary_values",
  {
    questionId: text("question_id").notNull(),
    kind: text("kind").notNull(),
    value: text("value").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.questionId, t.kind, t.value] })],
);

/** String elements of array and object answers grouped per (question, kind, object key or '', element). */
export const summaryElements = sqliteTable(
  "summary_elements",
  {
    questionId: text("question_id").notNull(),
    kind: text("kind").notNull(),
    rowKey: text("row_key").notNull(),
    item: text("item").notNull(),
    n: integer("n").notNull(),
    positionSum: integer("position_sum").notNull(),
    firstCount: integer("first_count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.questionId, t.kind, t.rowKey, t.item] })],
);

/**
 * Completions whose D1 side is not confirmed yet: the survey's response_count and the webhook
 * delivery rows (surveys.publish.ts). Written in the completion's own transaction, deleted when D1
 * has them; the object's alarm retries what is left (idempotent by the response id).
 */
export const pendingPublish = sqliteTable("pending_publish", {
  responseId: text("response_id").primaryKey(),
  completedAt: text("completed_at").notNull(),
  attempts: integer("attempts").notNull().default(0),
});

/** One row (id 1): whose store this is and its response counts, kept by every start, completion and import. */
export const state = sqliteTable("state", {
  id: integer("id").primaryKey(),
  surveyId: text("survey_id").notNull(),
  teamId: text("team_id").notNull(),
  inProgress: integer("in_progress").notNull().default(0),
  completed: integer("completed").notNull().default(0),
});
