// RelayStore: the events of one webhook source with their deliveries and attempts, in a
// SQLite-backed Durable Object of their own (one object per source, named by the source id). D1
// keeps the control plane (sources, destinations, teams); the volume lives here, so capacity grows
// with the number of sources (10 GB per object) and ingest is one call beside its data.
// The schema is Drizzle's (relay-store.schema.ts) with migrations generated for the durable-sqlite
// driver and applied when the object starts. Every method is an RPC of the Worker; times come from
// the caller (the platform clock), except the alarm, which runs on real time: retention (the
// source's retention_days, and a byte budget under the object's 10 GB), and the re-queue of
// deliveries whose queue message was lost (the store knows its own due work). Ingest also counts
// the source's forwards per minute (the forward cap, relay README). The object keeps the calls and
// their transactions; its SQL is relay-store.queries.ts's, its reads relay-store.reads.ts's, the
// claim relay-store.claims.ts's and the alarm's bulk work relay-store.upkeep.ts's.
import { log } from "../../../platform/log";
import { DurableObject } from "cloudflare:workers";
import { eq, inArray } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import type { Env } from "../../../env";
import type { DeliveryMessage } from "../relay.messages";
import migrations from "./migrations/migrations.js";
import * as schema from "./relay-store.schema";
import {
  ANY_EVENT,
  ANY_SENDING,
  COUNT_FORWARDS,
  DROP_DESTINATION_ATTEMPTS,
  DROP_DESTINATION_DELIVERIES,
  hotStatements,
  type EventPageFilter,
  type EventSummaryRow,
} from "./relay-store.queries";
import { claimDelivery, failDisabledDelivery } from "./relay-store.claims";
import { destinationStatuses, eventDetail, eventPage, rowCounts, type EventDetail } from "./relay-store.reads";
import { eachAlone, type AttemptRecord, type ClaimResult, type IngestAnswer, type IngestInput, type LegacyRows, type StoreWrite } from "./relay-store.rows";
import {
  importRows,
  lostDeliveries,
  lostDeliveryIds,
  purgeExpiredRows,
  STORE_BUDGET_BYTES,
  STORE_CHECK_FROM_BYTES,
  trimRowsToBudget,
} from "./relay-store.upkeep";

/** How often the alarm looks at an object that holds events; sooner while a purge or re-queue is unfinished. */
const ALARM_EVERY_MS = 3_600_000;
const ALARM_AGAIN_MS = 60_000;
/**
 * How soon after a first attempt's lease has ended the alarm looks for it: a delivery claimed at
 * ingest whose attempt never reported (the isolate that made it died) is queued again by then.
 */
export const FIRST_ATTEMPT_WATCH_MS = 30_000;

export type { AttemptRecord, ClaimResult, IngestAnswer, IngestInput, StoreWrite };

/** The forward cap's window: deliveries created at ingest are counted per minute of the caller's clock. */
const FORWARD_WINDOW_MS = 60_000;

export class RelayStore extends DurableObject<Env> {
  private readonly db: DrizzleSqliteDODatabase<typeof schema>;
  private readonly hot: ReturnType<typeof hotStatements>;
  private alarmChecked = false;
  /** When the alarm is set for (ms), as this object last set or read it; null: none. */
  private alarmAt: number | null = null;
  private deleted = false;
  /** The settings last written (`source_id|retention_days`): an ingest with the same ones writes none. */
  private settings: string | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = drizzle(ctx.storage, { schema });
    this.hot = hotStatements(this.db);
    void ctx.blockConcurrencyWhile(async () => {
      await migrate(this.db, migrations);
    });
  }

  /**
   * Ingest, in one transaction: a copy of a stored provider event id answers the stored event
   * (nothing written); then the source's forward cap: an event whose deliveries do not fit in the
   * minute's `forwardsPerMinute` answers `capped` with the seconds until the next minute (nothing
   * written: the sender retries; a loop through a third party slows to the cap); otherwise the event
   * and one delivery per destination given, each already claimed for its first attempt (`sending`,
   * attempt 1, leased until `claim.now + claim.leaseMs`: the claim rule of platform/jobs/claim.ts,
   * taken at birth), which the ingest request then makes without a claim call of its own. This store
   * is the deliveries' outbox: no queue message is sent for a first attempt; the alarm, moved to at
   * most FIRST_ATTEMPT_WATCH_MS ahead, queues any delivery whose first attempt never reported (its
   * isolate died) once its lease has ended.
   */
  private ingestOne(input: IngestInput): IngestAnswer {
    const { event, claim } = input;
    return this.ctx.storage.transactionSync((): IngestAnswer => {
      if (event.providerEventId !== null) {
        const found = this.findProviderEvent(event.providerEventId);
        if (found) return { duplicate: found };
      }
      if (input.deliveries.length > 0) {
        const minute = Math.floor(claim.now / FORWARD_WINDOW_MS);
        const counted = this.ctx.storage.sql.exec(COUNT_FORWARDS, minute, input.deliveries.length, input.forwardsPerMinute).toArray();
        if (counted.length === 0) return { capped: { retryAfter: Math.max(1, Math.ceil(((minute + 1) * FORWARD_WINDOW_MS - claim.now) / 1000)) } };
      }
      this.hot.insertEvent.run(event);
      this.insertDeliveries(event.id, input.deliveries, "ingest", event.receivedAt, claim.now + claim.leaseMs);
      this.setSettings(input.sourceId, input.retentionDays);
      return { duplicate: null };
    });
  }

  /**
   * The writes a source's events make, several in one call, in order, each exactly as if alone (its
   * own transaction): ingests and attempts' records alike, so the isolate coalesces them into
   * one line per source (relay.store.ts). One that fails answers its error and leaves the others as
   * they are. A record never rides the call of its own delivery's ingest: it is made after that
   * call answered.
   */
  async writeMany(writes: StoreWrite[]): Promise<Array<IngestAnswer | boolean | { error: string }>> {
    this.assertLive();
    const answers = eachAlone(writes, (write) => ("ingest" in write ? this.ingestOne(write.ingest) : this.recordOne(write.record)));
    let claimLeaseMs: number | null = null;
    let stored = false;
    writes.forEach((write, i) => {
      const answer = answers[i]!;
      if (!("ingest" in write) || typeof answer !== "object" || !("duplicate" in answer) || answer.duplicate) return;
      stored = true;
      if (write.ingest.deliveries.length > 0) claimLeaseMs ??= write.ingest.claim.leaseMs;
    });
    if (claimLeaseMs !== null) await this.watchWithin(claimLeaseMs + FIRST_ATTEMPT_WATCH_MS);
    else if (stored) await this.ensureAlarm();
    return answers;
  }

  /** The stored event of a provider event id, or null. */
  async findDuplicate(providerEventId: string): Promise<{ id: string; eventType: string | null } | null> {
    this.assertLive();
    return this.findProviderEvent(providerEventId);
  }

  /** An event's id and type (what a replay needs), or null. */
  async eventType(eventId: string): Promise<{ id: string; eventType: string | null } | null> {
    this.assertLive();
    const [row] = this.db.select({ id: schema.events.id, eventType: schema.events.eventType }).from(schema.events).where(eq(schema.events.id, eventId)).all();
    return row ?? null;
  }

  /** New pending deliveries of a stored event (a replay); false, nothing written, when the event is gone. */
  async addDeliveries(eventId: string, deliveries: Array<{ id: string; destinationId: string }>, at: string): Promise<boolean> {
    this.assertLive();
    const added = this.ctx.storage.transactionSync(() => {
      if (this.db.select({ id: schema.events.id }).from(schema.events).where(eq(schema.events.id, eventId)).all().length === 0) return false;
      this.insertDeliveries(eventId, deliveries, "replay", at);
      return true;
    });
    if (added) await this.ensureAlarm();
    return added;
  }

  /** Removes deliveries (with their attempts): a replay that could not be queued, a delivery whose destination is gone. */
  async removeDeliveries(ids: string[]): Promise<void> {
    this.assertLive();
    if (ids.length === 0) return;
    this.ctx.storage.transactionSync(() => {
      this.db.delete(schema.attempts).where(inArray(schema.attempts.deliveryId, ids)).run();
      this.db.delete(schema.deliveries).where(inArray(schema.deliveries.id, ids)).run();
    });
  }

  /** A destination was deleted: its deliveries and their attempts go with it (as D1's cascade did). */
  async dropDestination(destinationId: string): Promise<void> {
    this.assertLive();
    this.ctx.storage.transactionSync(() => {
      this.ctx.storage.sql.exec(DROP_DESTINATION_ATTEMPTS, destinationId);
      this.ctx.storage.sql.exec(DROP_DESTINATION_DELIVERIES, destinationId);
    });
  }

  /**
   * Claims a delivery for one attempt (platform/jobs/claim.ts's rule: `pending` with no live lease,
   * or `sending` under a lease that ended): `sending`, one more attempt, leased until now + leaseMs.
   * The object runs one call at a time, so of two consumers claiming at once exactly one wins.
   */
  async claim(deliveryId: string, now: number, leaseMs: number, at: string): Promise<ClaimResult> {
    // A message of a deleted source finds nothing.
    if (this.deleted) return null;
    return claimDelivery(this.db, deliveryId, now, leaseMs, at);
  }

  /** A claimed delivery whose destination is disabled: `failed` without an attempt (the claim's count is taken back). */
  async failDisabled(deliveryId: string, at: string): Promise<void> {
    this.assertLive();
    failDisabledDelivery(this.db, deliveryId, at);
  }

  /** Records an attempt and its delivery's new state, conditional on the claim: a stale consumer overwrites nothing. */
  private recordOne(record: AttemptRecord): boolean {
    return this.ctx.storage.transactionSync(() => {
      const updated = this.hot.settleDelivery.all({
        status: record.status,
        statusCode: record.attempt.statusCode,
        error: record.attempt.error,
        nextAttemptAt: record.nextAttemptAt,
        dueMs: record.dueMs,
        deliveredAt: record.deliveredAt,
        at: record.at,
        deliveryId: record.deliveryId,
        number: record.number,
      });
      // The attempt happened whatever its claim became: it is recorded either way, as in D1.
      this.hot.insertAttempt.run({ ...record.attempt, deliveryId: record.deliveryId, number: record.number });
      return updated.length > 0;
    });
  }

  /** Up to `take` events, newest first, with their delivery roll-up. */
  async listEvents(filter: EventPageFilter, take: number): Promise<EventSummaryRow[]> {
    this.assertLive();
    return eventPage(this.ctx.storage.sql, filter, take);
  }

  /** One event with its headers and body, roll-up, deliveries (oldest first) and their attempts; null when unknown. */
  async eventDetail(eventId: string): Promise<EventDetail | null> {
    this.assertLive();
    return eventDetail(this.ctx.storage.sql, this.db, eventId);
  }

  /** The latest delivery's status per (event, destination) of the listed events. */
  async destinationStatuses(eventIds: string[]): Promise<Array<{ eventId: string; destinationId: string; status: string }>> {
    this.assertLive();
    return destinationStatuses(this.ctx.storage.sql, eventIds);
  }

  /** The source's retention changed: the next alarm purges with it. */
  async setRetention(sourceId: string, retentionDays: number): Promise<void> {
    this.assertLive();
    this.setSettings(sourceId, retentionDays);
  }

  /**
   * Imports rows of the former D1 tables (the operator's one-time migration), keeping their ids:
   * a row whose id is held is skipped, so a step that stopped between import and delete and runs
   * again doubles nothing.
   */
  async importLegacy(rows: LegacyRows, settings: { sourceId: string; retentionDays: number }): Promise<{ imported: number }> {
    this.assertLive();
    const imported = this.ctx.storage.transactionSync(() => {
      this.setSettings(settings.sourceId, settings.retentionDays);
      return importRows(this.db, rows);
    });
    await this.ensureAlarm();
    return { imported };
  }

  /** Rows held and the database's bytes (tests, the operator's size arithmetic). */
  async stats(): Promise<{ events: number; deliveries: number; attempts: number; bytes: number }> {
    this.assertLive();
    return { ...rowCounts(this.ctx.storage.sql), bytes: this.ctx.storage.sql.databaseSize };
  }

  /** Retention by the source's retention_days (relay-store.upkeep.ts); `more`: the run stopped at its bound. */
  async purgeExpired(now: number): Promise<{ deleted: number; more: boolean }> {
    this.assertLive();
    const days = Number(this.getMeta("retention_days"));
    return days ? purgeExpiredRows(this.ctx.storage, days, now) : { deleted: 0, more: false };
  }

  /** The byte budget (relay-store.upkeep.ts): the oldest events go while the rows' estimate passes `budget`. */
  async trimToBudget(budget: number, checkFrom: number): Promise<{ deleted: number; more: boolean }> {
    this.assertLive();
    return trimRowsToBudget(this.ctx.storage, budget, checkFrom);
  }

  /**
   * The messages of the deliveries whose queue message was lost at `now` (see relay-store.upkeep.ts),
   * at most lostDeliveries.limit; the rows are not changed: the claim decides who sends.
   */
  async lostMessages(now: number): Promise<DeliveryMessage[]> {
    this.assertLive();
    const sourceId = this.getMeta("source_id");
    return sourceId === null ? [] : lostDeliveryIds(this.ctx.storage.sql, now).map((id) => ({ delivery_id: id, source_id: sourceId }));
  }

  /** Queues the lost deliveries' messages again (the alarm); true when more may be waiting. */
  private async requeueLost(now: number): Promise<boolean> {
    const messages = await this.lostMessages(now);
    for (let i = 0; i < messages.length; i += 100) {
      await this.env.WEBHOOK_QUEUE.sendBatch(messages.slice(i, i + 100).map((body) => ({ body, contentType: "json" as const })));
    }
    if (messages.length > 0) log.info("relay: re-queued deliveries whose message was lost", { requeued: messages.length });
    return messages.length === lostDeliveries.limit;
  }

  /** Deleting the source: every event, delivery and attempt, and the alarm, go. The object answers nothing after. */
  async destroy(): Promise<void> {
    this.deleted = true;
    this.settings = null;
    await this.ctx.storage.deleteAlarm();
    this.alarmAt = null;
    await this.ctx.storage.deleteAll();
  }

  override async alarm(): Promise<void> {
    if (this.deleted) return;
    this.alarmAt = null;
    const now = Date.now();
    const purged = await this.purgeExpired(now);
    const trimmed = await this.trimToBudget(STORE_BUDGET_BYTES, STORE_CHECK_FROM_BYTES);
    const lostMore = await this.requeueLost(now);
    const held = this.ctx.storage.sql.exec(ANY_EVENT).toArray().length > 0;
    // Deliveries still in their first attempt are watched until their lease has ended.
    const watching = this.ctx.storage.sql.exec(ANY_SENDING).toArray().length > 0;
    if (purged.more || trimmed.more || lostMore) await this.setAlarm(Date.now() + ALARM_AGAIN_MS);
    else if (watching) await this.setAlarm(Date.now() + FIRST_ATTEMPT_WATCH_MS);
    else if (held) await this.setAlarm(Date.now() + ALARM_EVERY_MS);
    else this.alarmChecked = false;
  }

  /** New deliveries of an event: `pending`, or with `leaseUntil` already claimed for their first attempt. */
  private insertDeliveries(
    eventId: string,
    deliveries: Array<{ id: string; destinationId: string }>,
    trigger: "ingest" | "replay",
    at: string,
    leaseUntil: number | null = null,
  ): void {
    if (deliveries.length === 0) return;
    const dueMs = Date.parse(at);
    const status = leaseUntil === null ? "pending" : "sending";
    const attempts = leaseUntil === null ? 0 : 1;
    for (const d of deliveries)
      this.hot.insertDelivery.run({ id: d.id, eventId, destinationId: d.destinationId, status, attempts, leaseUntil, dueMs, trigger, at });
  }

  private findProviderEvent(providerEventId: string): { id: string; eventType: string | null } | null {
    const [row] = this.hot.providerEvent.all({ providerEventId });
    return row ?? null;
  }

  private async ensureAlarm(): Promise<void> {
    if (this.alarmChecked) return;
    this.alarmAt = await this.ctx.storage.getAlarm();
    if (this.alarmAt === null) await this.setAlarm(Date.now() + ALARM_EVERY_MS);
    this.alarmChecked = true;
  }

  /**
   * Makes sure the alarm comes within `ms` (real time): deliveries claimed at ingest are watched by
   * it. A steady stream of events moves the alarm once per `ms`, not once per event (the time it is
   * set for is kept in memory).
   */
  private async watchWithin(ms: number): Promise<void> {
    if (!this.alarmChecked) await this.ensureAlarm();
    const latest = Date.now() + ms;
    if (this.alarmAt !== null && this.alarmAt <= latest) return;
    await this.setAlarm(latest);
  }

  private async setAlarm(at: number): Promise<void> {
    await this.ctx.storage.setAlarm(at);
    this.alarmAt = at;
  }

  private assertLive(): void {
    if (this.deleted) throw new Error("relay store deleted");
  }

  private setSettings(sourceId: string, retentionDays: number): void {
    const settings = `${sourceId}|${retentionDays}`;
    if (settings === this.settings) return;
    this.settings = settings;
    for (const [key, value] of [
      ["source_id", sourceId],
      ["retention_days", String(retentionDays)],
    ]) {
      this.db.insert(schema.meta).values({ key, value }).onConflictDoUpdate({ target: schema.meta.key, set: { value } }).run();
    }
  }

  private getMeta(key: string): string | null {
    const [row] = this.db.select({ value: schema.meta.value }).from(schema.meta).where(eq(schema.meta.key, key)).all();
    return row?.value ?? null;
  }
}
