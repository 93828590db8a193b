// SurveyStore: the responses of one survey (respondents are embedded in them) and its summary
// counters, in a SQLite-backed Durable Object of their own (one object per survey, named by the
// survey id, which the Worker only ever takes from a survey row it loaded for the caller's team).
// D1 keeps the control plane: the survey, its questions, webhooks, deliveries and response_count.
// A completion commits here in one transaction (status, counters, a "pending publish" row), then
// the object writes the D1 side (surveys.publish.ts: response_count and the webhook deliveries,
// idempotent by the response id); when that write fails, the object's alarm retries it. The
// schema is Drizzle's (survey-store.schema.ts), migrations generated for the durable-sqlite driver
// and applied when the object starts. Every method is an RPC of the Worker.
import { jsonChunks } from "../../../platform/json-chunks";
import { boundedPage, type BoundedPage } from "../../../platform/pagination";
import { log } from "../../../platform/log";
import { DurableObject } from "cloudflare:workers";
import { asc, eq, sql } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import type { Env } from "../../../env";
import { publishCompletion } from "../surveys.publish";
import migrations from "./migrations/migrations.js";
import type { ResponseFilter, ResponseUpdate, StoredResponse, StoreOwner, SummaryQuestion } from "./survey-rows";
import * as schema from "./survey-store.schema";
import {
  addElementsSql,
  addValuesSql,
  CLEAR_ELEMENTS,
  CLEAR_VALUES,
  COMPLETE_RESPONSE,
  COMPLETED_AFTER_SQL,
  COUNT_PENDING_PUBLISH,
  countResponsesSql,
  DROP_ORPHAN_ELEMENTS,
  DROP_ORPHAN_VALUES,
  INSERT_RESPONSES_RETURNING,
  READ_ELEMENTS_SQL,
  READ_VALUES_SQL,
  RECOUNT_STATE,
  RESPONSE_BY_ID,
  responsePageSql,
  responseWhere,
  SET_SUMMARY_QUESTIONS,
  UPDATE_RESPONSE,
  type ElementRow,
  type Scope,
  type ValueRow,
} from "./survey-store.queries";

/** The first retry of a completion's D1 side, then the longest wait between two. */
export const PUBLISH_RETRY_MS = 30_000;
const PUBLISH_RETRY_MAX_MS = 3_600_000;
/** Pending completions published per alarm run. */
const PUBLISH_BATCH = 50;

type Row = StoredResponse & { seq: number } & Record<string, SqlStorageValue>;

export class SurveyStore extends DurableObject<Env> {
  private db: DrizzleSqliteDODatabase<typeof schema>;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = drizzle(ctx.storage, { schema });
    void ctx.blockConcurrencyWhile(async () => {
      await migrate(this.db, migrations);
    });
  }

  /** Starts a response: the row and the in-progress count, in one transaction. */
  async start(owner: StoreOwner, row: StoredResponse): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      this.own(owner);
      const [inserted] = this.insertRows([row]);
      if (!inserted) throw new Error("survey store: response id already held");
      this.db
        .update(schema.state)
        .set({ inProgress: sql`${schema.state.inProgress} + 1` })
        .where(eq(schema.state.id, 1))
        .run();
    });
  }

  async get(id: string): Promise<StoredResponse | null> {
    const [row] = this.ctx.storage.sql.exec<Row>(RESPONSE_BY_ID, id).toArray();
    return row ? stored(row) : null;
  }

  /** An answer or a step back: applies only while the response still holds what the caller read (false otherwise). */
  async update(id: string, u: ResponseUpdate): Promise<boolean> {
    return (
      this.ctx.storage.sql
        .exec(
          UPDATE_RESPONSE,
          u.set.answers,
          u.set.path,
          u.set.nextQuestionId,
          u.set.generatedQuestions,
          u.set.updatedAt,
          id,
          u.expect.updatedAt,
          u.expect.nextQuestionId,
          u.expect.path,
        )
        .toArray().length === 1
    );
  }

  /**
   * Completes an in-progress response. Exactly one call wins: in one transaction it marks the
   * response completed, adds its answers to the counters and records the completion as pending
   * publish. Then (committed) the D1 side is written; if that fails the alarm retries it.
   */
  async complete(owner: StoreOwner, id: string, completion: { completionId: string; at: string }, questions: SummaryQuestion[]): Promise<{ won: boolean }> {
    const won = this.ctx.storage.transactionSync(() => {
      this.own(owner);
      this.syncQuestions(questions);
      const changed = this.ctx.storage.sql.exec(COMPLETE_RESPONSE, completion.completionId, completion.at, completion.at, id).toArray();
      if (changed.length !== 1) return false;
      this.db
        .update(schema.state)
        .set({ inProgress: sql`${schema.state.inProgress} - 1`, completed: sql`${schema.state.completed} + 1` })
        .where(eq(schema.state.id, 1))
        .run();
      this.count("listed", [id]);
      this.db.insert(schema.pendingPublish).values({ responseId: id, completedAt: completion.at }).run();
      return true;
    });
    if (won) {
      await this.ctx.storage.setAlarm(Date.now() + PUBLISH_RETRY_MS);
      await this.publishPending(id);
    }
    return { won };
  }

  /** A page of the list, newest first (ties: the later insert first), and the total the filter matches. */
  async page(filter: ResponseFilter, limit: number, offset: number): Promise<{ rows: StoredResponse[]; total: number }> {
    const { clause, params } = responseWhere(filter);
    const rows = this.ctx.storage.sql
      .exec<Row>(responsePageSql(clause), ...params, limit, offset)
      .toArray()
      .map(stored);
    // Without a time filter the total is the kept count: no scan of the survey's responses.
    let total: number;
    if (filter.since || filter.until) total = this.ctx.storage.sql.exec<{ n: number }>(countResponsesSql(clause), ...params).one().n;
    else {
      const s = this.readCounts();
      total = filter.status === "completed" ? s.completed : filter.status === "in_progress" ? s.inProgress : s.completed + s.inProgress;
    }
    return { rows, total };
  }

  /**
   * Completed responses after `seq`, in seq order (the export's pages): at most `limit`, and no more
   * than `maxBytes` of their text (the first always), since an answer may hold 10,000 characters and
   * a call's answer is refused over 32 MiB. `more`: the page stopped before the last completed one.
   */
  async completedAfter(after: number, page: BoundedPage): Promise<{ rows: Array<StoredResponse & { seq: number }>; more: boolean }> {
    const { rows, more } = boundedPage(
      this.ctx.storage.sql.exec<Row>(COMPLETED_AFTER_SQL, after, page.limit + 1),
      page,
      (r) => r.answers.length + r.generated_questions.length + r.respondent.length + r.path.length,
    );
    return { rows: rows.map((r) => ({ ...stored(r), seq: r.seq })), more };
  }

  /**
   * The counts and grouped counters, with the question list they follow. Given the survey's
   * current questions, it first brings the counters in line with them (a deleted question's
   * counters go; a question that changed type has them rebuilt); without, it reads what is kept,
   * so a caller can ask while it is still reading the questions and ask again only when the list
   * it gets back differs (summaryOf in survey-results.service.ts).
   */
  async summary(
    questions?: SummaryQuestion[],
  ): Promise<{ inProgress: number; completed: number; questions: SummaryQuestion[]; values: ValueRow[]; elements: ElementRow[] }> {
    return this.ctx.storage.transactionSync(() => {
      if (questions) this.syncQuestions(questions);
      return {
        ...this.readCounts(),
        questions: this.db.select().from(schema.summaryQuestions).all(),
        values: this.ctx.storage.sql.exec<ValueRow & Record<string, SqlStorageValue>>(READ_VALUES_SQL).toArray(),
        elements: this.ctx.storage.sql.exec<ElementRow & Record<string, SqlStorageValue>>(READ_ELEMENTS_SQL).toArray(),
      };
    });
  }

  /**
   * Imports responses (the operator's migration from D1, and the bench's seed): rows already held
   * are skipped, so a repeated step imports nothing twice. Counts and counters follow in the same
   * transaction. Their D1 side is already there (they were completed in D1): nothing is published.
   */
  async importResponses(owner: StoreOwner, rows: StoredResponse[], questions: SummaryQuestion[]): Promise<{ imported: number }> {
    return this.ctx.storage.transactionSync(() => {
      this.own(owner);
      this.syncQuestions(questions);
      const inserted = this.insertRows(rows);
      const completed = inserted.filter((r) => r.status === "completed").map((r) => r.id);
      this.db
        .update(schema.state)
        .set({
          inProgress: sql`${schema.state.inProgress} + ${inserted.length - completed.length}`,
          completed: sql`${schema.state.completed} + ${completed.length}`,
        })
        .where(eq(schema.state.id, 1))
        .run();
      if (completed.length) this.count("listed", completed);
      return { imported: inserted.length };
    });
  }

  /** Response counts (the list's totals, the summary, tests). */
  async counts(): Promise<{ inProgress: number; completed: number }> {
    return this.readCounts();
  }

  private readCounts(): { inProgress: number; completed: number } {
    const [row] = this.db.select({ inProgress: schema.state.inProgress, completed: schema.state.completed }).from(schema.state).all();
    return row ?? { inProgress: 0, completed: 0 };
  }

  /** Completions whose D1 side is not confirmed yet (tests, operators). */
  async pendingPublishes(): Promise<string[]> {
    return this.db
      .select({ id: schema.pendingPublish.responseId })
      .from(schema.pendingPublish)
      .all()
      .map((r) => r.id);
  }

  /** Deleting the survey: every response, counter and pending publish, and the alarm, go. */
  async destroy(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    // The object stays usable (empty, schema in place): a call racing the deletion fails no query.
    await migrate(this.db, migrations);
  }

  /** Retries the D1 side of the completions still pending; again later while any is left. */
  override async alarm(): Promise<void> {
    const left = await this.publishPending();
    if (left > 0) {
      const [row] = this.db
        .select({ attempts: schema.pendingPublish.attempts })
        .from(schema.pendingPublish)
        .orderBy(asc(schema.pendingPublish.attempts))
        .limit(1)
        .all();
      const wait = Math.min(PUBLISH_RETRY_MAX_MS, PUBLISH_RETRY_MS * 2 ** Math.min(row?.attempts ?? 0, 10));
      await this.ctx.storage.setAlarm(Date.now() + wait);
    }
  }

  /** Publishes pending completions (one, or a batch of the oldest); returns how many are still pending. */
  private async publishPending(only?: string): Promise<number> {
    const [owner] = this.db.select().from(schema.state).all();
    const pending = this.db
      .select()
      .from(schema.pendingPublish)
      .where(only === undefined ? undefined : eq(schema.pendingPublish.responseId, only))
      .orderBy(asc(schema.pendingPublish.completedAt))
      .limit(PUBLISH_BATCH)
      .all();
    for (const p of pending) {
      try {
        await publishCompletion(this.env, { surveyId: owner.surveyId, teamId: owner.teamId }, p.responseId, p.completedAt);
        this.db.delete(schema.pendingPublish).where(eq(schema.pendingPublish.responseId, p.responseId)).run();
      } catch (error) {
        log.error("survey completion: D1 side not written, the store's alarm retries it", { response_id: p.responseId, error: String(error) });
        this.db
          .update(schema.pendingPublish)
          .set({ attempts: sql`${schema.pendingPublish.attempts} + 1` })
          .where(eq(schema.pendingPublish.responseId, p.responseId))
          .run();
      }
    }
    return this.ctx.storage.sql.exec<{ n: number }>(COUNT_PENDING_PUBLISH).one().n;
  }

  /** Records the owner on the first write; a different owner is a bug of the caller and is refused. */
  private own(owner: StoreOwner): void {
    this.db.insert(schema.state).values({ id: 1, surveyId: owner.surveyId, teamId: owner.teamId }).onConflictDoNothing().run();
    const [row] = this.db.select().from(schema.state).all();
    if (row.surveyId !== owner.surveyId || row.teamId !== owner.teamId) throw new Error("survey store: owner mismatch");
  }

  /**
   * Inserts rows (ids already held are skipped), as JSON lists of at most JSON_CHUNK_BYTES each (one
   * bound value: SQLite refuses a larger string); returns the inserted ones' ids and statuses.
   */
  private insertRows(rows: StoredResponse[]): Array<{ id: string; status: string }> {
    const inserted: Array<{ id: string; status: string }> = [];
    for (const chunk of jsonChunks(rows)) {
      inserted.push(...this.ctx.storage.sql.exec<{ id: string; status: string }>(INSERT_RESPONSES_RETURNING, chunk).toArray());
    }
    return inserted;
  }

  /** Adds the scope's completed answers to the counters. */
  private count(scope: Scope, ids: string[]): void {
    const bind = scope === "listed" ? [JSON.stringify(ids)] : [];
    this.ctx.storage.sql.exec(addValuesSql(scope), ...bind);
    this.ctx.storage.sql.exec(addElementsSql(scope), ...bind);
  }

  /**
   * Keeps the question list the counters follow equal to the caller's (the survey's current
   * questions): a deleted question's counters go. When a question kept its id but changed type,
   * the counters and counts are rebuilt from the responses (the answers' grouping depends on the type).
   */
  private syncQuestions(questions: SummaryQuestion[]): void {
    const held = new Map(
      this.db
        .select()
        .from(schema.summaryQuestions)
        .all()
        .map((q) => [q.id, q.type]),
    );
    const same = held.size === questions.length && questions.every((q) => held.get(q.id) === q.type);
    if (same) return;
    const retyped = questions.some((q) => held.has(q.id) && held.get(q.id) !== q.type);
    this.db.delete(schema.summaryQuestions).run();
    this.ctx.storage.sql.exec(SET_SUMMARY_QUESTIONS, JSON.stringify(questions.map((q) => ({ id: q.id, type: q.type }))));
    if (retyped) this.rebuild();
    else {
      this.ctx.storage.sql.exec(DROP_ORPHAN_VALUES);
      this.ctx.storage.sql.exec(DROP_ORPHAN_ELEMENTS);
    }
  }

  /** The counters and counts recomputed from every response held (one pass each; only after a question changed type). */
  private rebuild(): void {
    this.ctx.storage.sql.exec(CLEAR_VALUES);
    this.ctx.storage.sql.exec(CLEAR_ELEMENTS);
    this.count("all", []);
    this.ctx.storage.sql.exec(RECOUNT_STATE);
  }
}

function stored(row: Row): StoredResponse {
  const { seq: _seq, ...rest } = row;
  return rest as StoredResponse;
}
