// FormStore: the submissions of one form (inbox and spam), the webhook deliveries of each and
// their attempts, in a SQLite-backed Durable Object of their own (one per form, named by the form
// id, which the Worker only ever takes from a form row it loaded for the caller's team or for a
// public post). D1 keeps the form itself. The object's alarm is its scheduler: it sends the
// deliveries that are due (the first at once, retries on the relay's schedule, a re-send when
// asked) and deletes what is past the form's retention, in bounded steps, with its files in R2.
// Only the alarm sends, and alarms never overlap, so no delivery is attempted twice at once.
import { DurableObject } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import type { Env } from "../../../env";
import { getDb } from "../../../db/client";
import { nowMs, nowSeconds } from "../../../platform/clock";
import { log } from "../../../platform/log";
import { webhookRetryDelaySeconds } from "../../../platform/backoff";
import { fileKey, formPrefix, type StoredFile } from "../forms.files";
import { forms } from "../../../db/schema/forms";
import { sendWebhook, type WebhookSubmission } from "../forms.webhook";
import migrations from "./migrations/migrations.js";
import * as Q from "./form-store.queries";
import * as schema from "./form-store.schema";

/** Whose form this object holds, and how long it keeps submissions. */
export interface StoreOwner {
  formId: string;
  teamId: string;
  retentionDays: number;
}

/** A submission as the store keeps it (JSON columns as text). */
export interface StoredSubmission {
  id: string;
  status: "inbox" | "spam";
  fields: string;
  files: string;
  subject: string | null;
  reply_to: string | null;
  origin: string | null;
  created_at: string;
}

export interface StoredAttempt {
  number: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  response_body: string | null;
}

export interface StoredDelivery {
  id: string;
  submission_id: string;
  status: "pending" | "delivered" | "failed";
  trigger: "submission" | "resend";
  next_attempt_at: string | null;
  created_at: string;
  attempts: StoredAttempt[];
}

type Row = StoredSubmission & { seq: number } & Record<string, SqlStorageValue>;

/** Deliveries sent per alarm run; the rest wait for the next run, set at once. */
const DELIVERIES_PER_RUN = 10;
/** Submissions deleted per alarm run past their retention. */
const PURGE_PER_RUN = 500;
/** How often the retention is checked while the store holds submissions. */
const RETENTION_CHECK_MS = 3_600_000;

export class FormStore extends DurableObject<Env> {
  private db: DrizzleSqliteDODatabase<typeof schema>;
  /** The owner row as last written by this instance (`own`): a post writes it only when it changed. */
  private ownerWritten: string | null = null;
  /** The alarm as this instance last set or read it; undefined when not known (a new instance, an alarm running). */
  private alarmAt: number | null | undefined = undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = drizzle(ctx.storage, { schema });
    void ctx.blockConcurrencyWhile(async () => {
      await migrate(this.db, migrations);
    });
  }

  private sql<T extends Record<string, SqlStorageValue>>(query: string, ...params: SqlStorageValue[]): T[] {
    return this.ctx.storage.sql.exec<T>(query, ...params).toArray();
  }

  /** Records (or updates) whose form this is; a write only when it is not what this instance last wrote. */
  private own(owner: StoreOwner): void {
    const written = `${owner.formId}\n${owner.teamId}\n${owner.retentionDays}`;
    if (written === this.ownerWritten) return;
    this.sql(Q.UPSERT_OWNER, owner.formId, owner.teamId, owner.retentionDays);
    this.ownerWritten = written;
  }

  private owner(): StoreOwner | null {
    const [row] = this.sql<{ form_id: string; team_id: string; retention_days: number }>(Q.SELECT_OWNER);
    return row ? { formId: row.form_id, teamId: row.team_id, retentionDays: row.retention_days } : null;
  }

  /** Stores a submission and, when `webhook`, its first delivery (due now), in one transaction. */
  async add(owner: StoreOwner, s: StoredSubmission, webhook: boolean): Promise<void> {
    const [outcome] = await this.addMany(owner, [{ submission: s, webhook }]);
    if (outcome !== true) throw new Error(outcome!.error);
  }

  /**
   * Stores several posts of the form at once (the isolate's concurrent posts, coalesced in
   * forms.store.ts): each in its own transaction with its first delivery, answered as if alone (one
   * that fails does not fail the others), then one look at the alarm for all of them. One call and
   * one flush for many posts: a form's posts no longer queue one write at a time behind each other.
   */
  async addMany(owner: StoreOwner, items: Array<{ submission: StoredSubmission; webhook: boolean }>): Promise<Array<true | { error: string }>> {
    const at = nowMs();
    this.own(owner);
    let due = false;
    const outcomes = items.map(({ submission: s, webhook }): true | { error: string } => {
      try {
        this.ctx.storage.transactionSync(() => {
          this.sql(Q.INSERT_SUBMISSION, s.id, s.status, s.fields, s.files, s.subject, s.reply_to, s.origin, s.created_at);
          if (webhook && s.status === "inbox") {
            this.newDelivery(s.id, "submission", at);
            due = true;
          }
        });
        return true;
      } catch (error) {
        return { error: String(error) };
      }
    });
    await this.schedule(due ? at : null);
    return outcomes;
  }

  private newDelivery(submissionId: string, trigger: "submission" | "resend", at: number): string {
    const id = crypto.randomUUID();
    this.sql(Q.INSERT_DELIVERY, id, submissionId, trigger, at, new Date(at).toISOString());
    return id;
  }

  /** Applies a changed retention. */
  async configure(owner: StoreOwner): Promise<void> {
    this.own(owner);
  }

  /** A page of one status, newest first, before the row `before` (a seq) when given. */
  async page(status: "inbox" | "spam", limit: number, before: number | null): Promise<{ rows: StoredSubmission[]; next: number | null }> {
    const rows = this.sql<Row>(Q.SUBMISSIONS_PAGE, status, before ?? Number.MAX_SAFE_INTEGER, limit + 1);
    const more = rows.length > limit;
    const kept = rows.slice(0, limit);
    return { rows: kept.map(plain), next: more ? kept[kept.length - 1]!.seq : null };
  }

  async get(id: string): Promise<StoredSubmission | null> {
    const [row] = this.sql<Row>(Q.SUBMISSION_BY_ID, id);
    return row ? plain(row) : null;
  }

  /** Deletes a submission with its deliveries and attempts; its files go from R2. False when unknown. */
  async remove(id: string): Promise<boolean> {
    const owner = this.owner();
    const [row] = this.sql<Row>(Q.SUBMISSION_BY_ID, id);
    if (!row || !owner) return false;
    this.ctx.storage.transactionSync(() => this.deleteRows([id]));
    await this.deleteFiles(owner.formId, [row]);
    return true;
  }

  /** Moves a submission to the inbox or to spam; false when unknown. */
  async move(id: string, status: "inbox" | "spam"): Promise<StoredSubmission | null> {
    const [row] = this.sql<Row>(Q.MOVE_SUBMISSION, status, id);
    return row ? plain(row) : null;
  }

  async counts(): Promise<{ inbox: number; spam: number }> {
    const rows = this.sql<{ status: string; n: number }>(Q.COUNT_BY_STATUS);
    const of = (s: string) => rows.find((r) => r.status === s)?.n ?? 0;
    return { inbox: of("inbox"), spam: of("spam") };
  }

  /** The webhook deliveries of a submission (or the latest of the form), newest first, with their attempts. */
  async deliveries(submissionId: string | null, limit = 50): Promise<StoredDelivery[]> {
    const rows = submissionId
      ? this.sql<Record<string, SqlStorageValue>>(Q.DELIVERIES_OF_SUBMISSION, submissionId, limit)
      : this.sql<Record<string, SqlStorageValue>>(Q.LATEST_DELIVERIES, limit);
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id as string);
    const attempts = this.sql<Record<string, SqlStorageValue>>(Q.attemptsOf(ids.length), ...ids);
    return rows.map((r) => ({
      id: r.id as string,
      submission_id: r.submission_id as string,
      status: r.status as StoredDelivery["status"],
      trigger: r.trigger as StoredDelivery["trigger"],
      next_attempt_at: r.next_attempt_at === null ? null : new Date(r.next_attempt_at as number).toISOString(),
      created_at: r.created_at as string,
      attempts: attempts
        .filter((a) => a.delivery_id === r.id)
        .map((a) => ({
          number: a.number as number,
          attempted_at: a.attempted_at as string,
          status_code: a.status_code as number | null,
          duration_ms: a.duration_ms as number | null,
          error: a.error as string | null,
          response_body: a.response_body as string | null,
        })),
    }));
  }

  /** A new delivery of an inbox submission, due now; null when the submission is unknown or spam. */
  async resend(submissionId: string): Promise<string | null> {
    const at = nowMs();
    const id = this.ctx.storage.transactionSync(() => {
      const [row] = this.sql<{ status: string }>(Q.SUBMISSION_STATUS, submissionId);
      if (row?.status !== "inbox") return null;
      return this.newDelivery(submissionId, "resend", at);
    });
    if (id) await this.schedule(at);
    return id;
  }

  /** A page of the inbox for the export, newest first, before `before`. */
  async exportPage(before: number | null, limit: number): Promise<{ rows: StoredSubmission[]; next: number | null }> {
    return this.page("inbox", limit, before);
  }

  /** Deletes everything the form holds (the form was deleted): rows and files. */
  async destroy(formId: string): Promise<void> {
    const prefix = formPrefix(formId);
    for (let cursor: string | undefined; ; ) {
      const listed = await this.env.FORM_FILES.list({ prefix, cursor, limit: 1000 });
      if (listed.objects.length > 0) await this.env.FORM_FILES.delete(listed.objects.map((o) => o.key));
      if (!listed.truncated) break;
      cursor = listed.cursor;
    }
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.ownerWritten = null;
    this.alarmAt = null;
  }

  override async alarm(): Promise<void> {
    // The alarm that runs is spent (or retried by the runtime if this throws): ask again when scheduling.
    this.alarmAt = undefined;
    const owner = this.owner();
    if (!owner) return;
    await this.purge(owner);
    await this.deliverDue(owner);
    await this.schedule(null);
  }

  /**
   * Sets the alarm to the earliest of `at`, the next due delivery and the next retention check.
   * Every change that makes a delivery due comes here with its time, and the alarm reschedules
   * itself when it has run, so the alarm is never later than a due delivery: with no `at`, an alarm
   * known to be set within the retention check's interval already covers everything (a post
   * without a webhook reads and writes nothing here).
   */
  private async schedule(at: number | null): Promise<void> {
    if (at === null && this.alarmAt != null && this.alarmAt <= nowMs() + RETENTION_CHECK_MS) return;
    const [due] = this.sql<{ t: number | null }>(Q.NEXT_DUE);
    const [any] = this.sql<{ n: number }>(Q.HOLDS_SUBMISSIONS);
    const candidates = [at, due?.t ?? null, any && any.n > 0 ? nowMs() + RETENTION_CHECK_MS : null].filter((t): t is number => t !== null);
    if (candidates.length === 0) return;
    const next = Math.min(...candidates);
    const current = this.alarmAt !== undefined ? this.alarmAt : await this.ctx.storage.getAlarm();
    if (current === null || current > next) {
      await this.ctx.storage.setAlarm(next);
      this.alarmAt = next;
    } else {
      this.alarmAt = current;
    }
  }

  private deleteRows(ids: string[]): void {
    for (const statement of Q.deleteSubmissions(ids.length)) this.sql(statement, ...ids);
  }

  private async deleteFiles(formId: string, rows: Array<Pick<StoredSubmission, "id" | "files">>): Promise<void> {
    const keys = rows.flatMap((r) => (JSON.parse(r.files) as StoredFile[]).map((f) => fileKey(formId, r.id, f.id)));
    for (let i = 0; i < keys.length; i += 1000) await this.env.FORM_FILES.delete(keys.slice(i, i + 1000));
  }

  /** Deletes submissions older than the retention, PURGE_PER_RUN at a time (90 per statement: the bound-parameter cap). */
  private async purge(owner: StoreOwner): Promise<void> {
    const cutoff = new Date(nowMs() - owner.retentionDays * 86_400_000).toISOString();
    const old = this.sql<{ id: string; files: string }>(Q.SUBMISSIONS_BEFORE, cutoff, PURGE_PER_RUN);
    if (old.length === 0) return;
    await this.deleteFiles(owner.formId, old);
    this.ctx.storage.transactionSync(() => {
      for (let i = 0; i < old.length; i += 90) this.deleteRows(old.slice(i, i + 90).map((r) => r.id));
    });
  }

  /** Sends the deliveries that are due, each once, and records the attempt. */
  private async deliverDue(owner: StoreOwner): Promise<void> {
    const now = nowMs();
    const due = this.sql<{ id: string; submission_id: string; attempts: number }>(Q.DUE_DELIVERIES, now, DELIVERIES_PER_RUN);
    if (due.length === 0) return;
    const [form] = await getDb(this.env.DB)
      .select({ name: forms.name, url: forms.webhookUrl, secret: forms.webhookSecret })
      .from(forms)
      .where(and(eq(forms.id, owner.formId), eq(forms.teamId, owner.teamId)));
    for (const d of due) {
      const submission = await this.get(d.submission_id);
      const number = d.attempts + 1;
      const attemptedAt = new Date(nowMs()).toISOString();
      if (!form?.url || !form.secret || !submission) {
        const reason = !form ? "form deleted" : !submission ? "submission deleted" : "webhook removed";
        this.record(d.id, number, attemptedAt, { ok: false, statusCode: null, durationMs: 0, error: reason, responseBody: null }, null);
        continue;
      }
      const result = await sendWebhook(
        this.env,
        { formId: owner.formId, formName: form.name, url: form.url, sealedSecret: form.secret },
        hook(submission),
        nowSeconds(),
      );
      const delay = result.ok ? null : webhookRetryDelaySeconds(number);
      this.record(d.id, number, attemptedAt, result, delay === null ? null : nowMs() + delay * 1000);
      if (!result.ok) log.info("form webhook attempt failed", { form_id: owner.formId, delivery_id: d.id, attempt: number, error: result.error });
    }
  }

  private record(
    deliveryId: string,
    number: number,
    attemptedAt: string,
    r: { ok: boolean; statusCode: number | null; durationMs: number; error: string | null; responseBody: string | null },
    nextAt: number | null,
  ): void {
    const status = r.ok ? "delivered" : nextAt === null ? "failed" : "pending";
    this.ctx.storage.transactionSync(() => {
      this.sql(Q.RECORD_ATTEMPT, deliveryId, number, attemptedAt, r.statusCode, r.durationMs, r.error, r.responseBody);
      this.sql(Q.UPDATE_DELIVERY, status, number, nextAt, deliveryId);
    });
  }
}

function plain(row: Row): StoredSubmission {
  return {
    id: row.id,
    status: row.status,
    fields: row.fields,
    files: row.files,
    subject: row.subject,
    reply_to: row.reply_to,
    origin: row.origin,
    created_at: row.created_at,
  };
}

function hook(s: StoredSubmission): WebhookSubmission {
  return { id: s.id, fields: JSON.parse(s.fields), files: JSON.parse(s.files), subject: s.subject, reply_to: s.reply_to, created_at: s.created_at };
}
