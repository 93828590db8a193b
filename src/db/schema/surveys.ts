// Survey tables: surveys, their sections and questions, per-survey webhooks and their deliveries,
// and the completions whose D1 side was written (survey_completions, kept 7 days). Every child row
// carries team_id and cascades with its survey. Responses and the summary counters live in each
// survey's store (src/products/surveys/store/); the D1 tables that held them (survey_responses,
// survey_summary_*) are kept only until the operator's migration has moved their rows there.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { teams } from "./platform";

export type JsonObject = Record<string, unknown>;

export const surveys = sqliteTable(
  "surveys",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** Globally unique (hence unique per team): the public URLs carry only the slug. */
    slug: text("slug").notNull(),
    mode: text("mode").$type<"manual" | "ai">().notNull().default("manual"),
    status: text("status").$type<"draft" | "active" | "closed">().notNull().default("draft"),
    settings: text("settings", { mode: "json" }).$type<JsonObject>().notNull(),
    aiConfig: text("ai_config", { mode: "json" }).$type<JsonObject>().notNull(),
    responseCount: integer("response_count").notNull().default(0),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("surveys_slug_idx").on(t.slug), index("surveys_team_idx").on(t.teamId, t.createdAt)],
);

export const surveySections = sqliteTable(
  "survey_sections",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").notNull(),
    surveyId: text("survey_id")
      .notNull()
      .references(() => surveys.id, { onDelete: "cascade" }),
    title: text("title"),
    description: text("description"),
    position: integer("position").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("survey_sections_survey_idx").on(t.surveyId, t.position)],
);

/** One branching condition: exactly one operator (see survey-rules.ts for which types take which). */
export type BranchCondition =
  | { equals: unknown }
  | { less_than: number }
  | { less_than_or_equal: number }
  | { greater_than: number }
  | { greater_than_or_equal: number }
  | { includes: string };

export interface Branching {
  rules: Array<{ if: BranchCondition; then: { go_to_question_id: string } | { skip_to_end: true } }>;
  default: { go_to_next: true } | { go_to_question_id: string } | { skip_to_end: true };
}

export const surveyQuestions = sqliteTable(
  "survey_questions",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").notNull(),
    surveyId: text("survey_id")
      .notNull()
      .references(() => surveys.id, { onDelete: "cascade" }),
    sectionId: text("section_id").references(() => surveySections.id, { onDelete: "set null" }),
    type: text("type").notNull(),
    title: text("title").notNull(),
    description: text("description"),
    options: text("options", { mode: "json" }).$type<string[]>().notNull(),
    settings: text("settings", { mode: "json" }).$type<JsonObject>().notNull(),
    position: integer("position").notNull(),
    branching: text("branching", { mode: "json" }).$type<Branching>().notNull(),
    version: integer("version").notNull().default(1),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("survey_questions_survey_idx").on(t.surveyId, t.position)],
);

/** One recorded answer: the value and the question version it was given against. */
export interface StoredAnswer {
  value: unknown;
  version: number;
  answered_at: string;
  /** Set when the question was generated for this response (AI mode). */
  generated?: boolean;
}

/** A question generated for one respondent (AI mode), stored with the response. */
export interface GeneratedQuestion {
  id: string;
  type: string;
  title: string;
  description: string | null;
  options: string[];
  settings: JsonObject;
  version: number;
  generated_by: string;
  created_at: string;
}

export interface Respondent {
  email?: string;
  name?: string;
  external_id?: string;
  metadata?: JsonObject;
}

/** Former home of the responses: read only by the operator's migration (surveys.migrate.ts), which empties it. */
export const surveyResponses = sqliteTable(
  "survey_responses",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").notNull(),
    surveyId: text("survey_id")
      .notNull()
      .references(() => surveys.id, { onDelete: "cascade" }),
    status: text("status").$type<"in_progress" | "completed">().notNull().default("in_progress"),
    respondent: text("respondent", { mode: "json" }).$type<Respondent>().notNull(),
    /** question id → StoredAnswer; answers of deleted questions stay here. */
    answers: text("answers", { mode: "json" }).$type<Record<string, StoredAnswer>>().notNull(),
    /** Question ids in the order they were answered: the respondent's path. */
    path: text("path", { mode: "json" }).$type<string[]>().notNull(),
    /** The only question the next answer may be for; null once the path has ended. */
    nextQuestionId: text("next_question_id"),
    generatedQuestions: text("generated_questions", { mode: "json" }).$type<GeneratedQuestion[]>().notNull(),
    /** Written by the one completion call that won, so the counter moves exactly once. */
    completionId: text("completion_id"),
    startedAt: text("started_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [index("survey_responses_survey_idx").on(t.surveyId, t.startedAt), index("survey_responses_status_idx").on(t.surveyId, t.status)],
);

export const surveyWebhooks = sqliteTable(
  "survey_webhooks",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").notNull(),
    surveyId: text("survey_id")
      .notNull()
      .references(() => surveys.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    events: text("events", { mode: "json" }).$type<string[]>().notNull(),
    /** The whsec_ signing secret, AES-GCM encrypted; shown in plaintext only at creation. */
    secretEncrypted: text("secret_encrypted").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("survey_webhooks_survey_idx").on(t.surveyId)],
);

export const surveyWebhookDeliveries = sqliteTable(
  "survey_webhook_deliveries",
  {
    /** Also the `webhook-id` header: stable across retries so receivers can de-duplicate. */
    id: text("id").primaryKey(),
    teamId: text("team_id").notNull(),
    surveyId: text("survey_id")
      .notNull()
      .references(() => surveys.id, { onDelete: "cascade" }),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => surveyWebhooks.id, { onDelete: "cascade" }),
    event: text("event").notNull(),
    /**
     * The completed response the delivery announces (in the survey's store): its body is built
     * from that one stored copy when sent, never copied into each delivery row. (`payload` is kept only for rows written
     * before; new rows leave it null.)
     */
    responseId: text("response_id"),
    payload: text("payload"),
    status: text("status").$type<"pending" | "delivered" | "failed">().notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    createdAt: text("created_at").notNull(),
    deliveredAt: text("delivered_at"),
    /**
     * The token of the one queue message allowed to attempt this delivery (null: the message sent
     * at completion). The sweeper re-queues with a new token, so a late original is ignored.
     */
    queueToken: text("queue_token"),
    /** Claimed by a consumer attempt until then (ms since the epoch); no other message may attempt it meanwhile. */
    leaseUntil: integer("lease_until"),
    /** When a queue message is next expected to attempt it (null: at created_at). */
    nextAttemptAt: text("next_attempt_at"),
  },
  (t) => [
    index("survey_webhook_deliveries_webhook_idx").on(t.webhookId, t.createdAt),
    index("survey_webhook_deliveries_pending_idx").on(t.status, t.nextAttemptAt),
  ],
);

/**
 * The completions whose D1 side (response_count, delivery rows) was written, keyed by the response
 * id: the store retries that write until it is confirmed, and this key makes a repeat change
 * nothing (surveys.publish.ts). `token` is the attempt that wrote the row. Kept 7 days (a retry
 * comes within minutes), then deleted by the hourly retention.
 */
export const surveyCompletions = sqliteTable(
  "survey_completions",
  {
    responseId: text("response_id").primaryKey(),
    surveyId: text("survey_id")
      .notNull()
      .references(() => surveys.id, { onDelete: "cascade" }),
    teamId: text("team_id").notNull(),
    token: text("token").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("survey_completions_created_idx").on(t.createdAt)],
);

/**
 * Former summary tables (this one and the two below): the counters live in each survey's store now
 * and are rebuilt there from the moved responses; the migration deletes these rows.
 */
export const surveySummaryState = sqliteTable("survey_summary_state", {
  surveyId: text("survey_id")
    .primaryKey()
    .references(() => surveys.id, { onDelete: "cascade" }),
  teamId: text("team_id").notNull(),
  inProgress: integer("in_progress").notNull().default(0),
  completed: integer("completed").notNull().default(0),
  rebuiltAt: text("rebuilt_at").notNull(),
});

/**
 * Completed answers grouped per (question, JSON type of the value, value). `value` is the JSON of
 * the value where the summary groups by it (choice, numeric and yes/no questions), '' otherwise
 * (one row per type for a text question, however many distinct texts it got).
 */
export const surveySummaryValues = sqliteTable(
  "survey_summary_values",
  {
    surveyId: text("survey_id")
      .notNull()
      .references(() => surveys.id, { onDelete: "cascade" }),
    teamId: text("team_id").notNull(),
    questionId: text("question_id")
      .notNull()
      .references(() => surveyQuestions.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    value: text("value").notNull(),
    n: integer("n").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.surveyId, t.questionId, t.kind, t.value] })],
);

/**
 * String elements of array and object answers (multi_choice, ranking, matrix) grouped per
 * (question, 'array' or 'object', object key or '', element): count, sum of 1-based positions and
 * first places (arrays).
 */
export const surveySummaryElements = sqliteTable(
  "survey_summary_elements",
  {
    surveyId: text("survey_id")
      .notNull()
      .references(() => surveys.id, { onDelete: "cascade" }),
    teamId: text("team_id").notNull(),
    questionId: text("question_id")
      .notNull()
      .references(() => surveyQuestions.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    rowKey: text("row_key").notNull(),
    item: text("item").notNull(),
    n: integer("n").notNull().default(0),
    positionSum: integer("position_sum").notNull().default(0),
    firstCount: integer("first_count").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.surveyId, t.questionId, t.kind, t.rowKey, t.item] })],
);
