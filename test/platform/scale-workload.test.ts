// The workload of issue 27, through the API with the real bindings: one team ingests relay events
// (a source with a destination), completes survey responses, registers push subscribers and sends
// them a notification, and sends large emails. D1's size (as D1 reports it, `meta.size_after`) is
// read between the phases, each store's database size inside its object and R2's bytes by listing
// MAIL_BODIES: D1 barely grows while the stores and R2 take the bytes, and every piece reads back
// through the API. A second case measures the control plane a team leaves in D1 (its rows and
// configuration). The figures are printed as one JSON line each (docs/SCALE.md cites them).
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { pushStore } from "../../src/products/push/push.store";
import { relayStore } from "../../src/products/relay/relay.store";
import { surveyStore } from "../../src/products/surveys/surveys.store";
import { call, json, setupTeam } from "../helpers/api";
import { playedQueue } from "../helpers/queues";
import { LIVE, postSettled } from "../products/mail/mail-helpers";
import { browserSubscription, createApp, pushService, subscribe, waitForCompletion } from "../products/push/push-helpers";
import { createDestination, createSource, ingestSettled, receiver } from "../products/relay/relay.helpers";
import { activeSurvey, answer, complete, startOk } from "../products/surveys/helpers";

const EVENTS = 200;
// Survey starts and subscriber registrations are each in a team's `strict` bucket (30 per 60 s).
const RESPONSES = 25;
const SUBSCRIBERS = 25;
const NOTIFICATIONS = 8;
const EMAILS = 20;
const HTML_BYTES = 200_000;

/** The D1 database's size in bytes (pages in use), as D1 reports it with every query. */
async function d1Bytes(): Promise<number> {
  return (await env.DB.prepare("SELECT 1").run()).meta.size_after;
}

/** A Durable Object's SQLite database size in bytes, read inside the object. */
function storeBytes(stub: DurableObjectStub): Promise<number> {
  return runInDurableObject(stub, async (_object, state) => state.storage.sql.databaseSize);
}

describe("D1 under a workload of every product that grows with traffic", () => {
  it("barely grows while relay, surveys and push stores and R2 take the bytes; every piece reads back", async () => {
    const team = await setupTeam({ plan: "scale" });
    // The control plane first: a source with a destination, a survey, a push app.
    const source = await createSource(team.key);
    const destination = await createDestination(team.key, source.id);
    const { survey, questions } = await activeSurvey(
      [
        { type: "nps", title: "How likely are you to recommend us?" },
        { type: "choice", title: "Plan", options: ["free", "pro", "scale"] },
        { type: "text", title: "Anything else?" },
      ],
      {},
      team,
    );
    const app = await createApp(team.key);
    const stores = { relay: relayStore(env, source.id), surveys: surveyStore(env, survey.id), push: pushStore(env, app.id) };
    const d1 = [await d1Bytes()];
    const empty = { relay: await storeBytes(stores.relay), surveys: await storeBytes(stores.surveys), push: await storeBytes(stores.push) };

    // Relay: ~1 KB provider events, each delivered once to the destination.
    const eventBody = (i: number) =>
      JSON.stringify({ id: `evt_${i}_${crypto.randomUUID()}`, type: "invoice.paid", data: { object: { id: `in_${i}`, lines: "x".repeat(900) } } });
    const rx = receiver([destination.url], [200]);
    try {
      for (let i = 0; i < EVENTS; i += 20) {
        const answers = await Promise.all(Array.from({ length: 20 }, (_, j) => ingestSettled(source.slug, eventBody(i + j), { "user-agent": "Stripe/1.0" })));
        expect(answers.map((r) => r.status)).toEqual(Array(20).fill(202));
      }
    } finally {
      rx.restore();
    }
    expect(rx.received).toHaveLength(EVENTS);
    d1.push(await d1Bytes());

    // Surveys: responses given and completed through the public flow.
    for (let i = 0; i < RESPONSES; i++) {
      const r = await startOk(survey.slug);
      const values = [i % 11, ["free", "pro", "scale"][i % 3], `Works well for us, ticket ${i}`];
      for (const [n, q] of questions.entries()) expect((await answer(survey.slug, r.id, q.id, values[n])).status).toBe(200);
      expect((await complete(survey.slug, r.id)).status).toBe(200);
    }
    d1.push(await d1Bytes());

    // Push: subscribers registered, then notifications to all of them, each queue played to the end.
    for (let i = 0; i < SUBSCRIBERS; i++) await subscribe(team.key, app.id, await browserSubscription());
    const withSubscribers = await storeBytes(stores.push);
    d1.push(await d1Bytes());
    const service = pushService();
    const queue = playedQueue("push-sends");
    const notifications: Array<{ id: string; counts: Record<string, number>; status: string }> = [];
    try {
      for (let i = 0; i < NOTIFICATIONS; i++) {
        const body = { title: "Your order has shipped", body: `Order ${4711 + i} left our warehouse and arrives on Thursday.`, url: `/orders/${4711 + i}` };
        const res = await call("POST", `push/apps/${app.id}/notifications`, { key: team.key, body, env: queue.env });
        expect(res.status).toBe(202);
        const sent = (await json(res)).data;
        expect(sent.recipients).toBe(SUBSCRIBERS);
        await queue.deliver();
        notifications.push(await waitForCompletion(team.key, app.id, sent.id));
      }
    } finally {
      service.restore();
    }
    expect(service.requests).toHaveLength(SUBSCRIBERS * NOTIFICATIONS);
    d1.push(await d1Bytes());

    // Mail: large emails, ~200 KB of html each, sent in one batch; their first attempt awaited.
    const paragraph = `<p>${"Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(20)}</p>`;
    const html = (i: number) => `<html><body><h1>Report ${i}</h1>${paragraph.repeat(Math.ceil(HTML_BYTES / 1_000))}</body></html>`.slice(0, HTML_BYTES);
    const emails = Array.from({ length: EMAILS }, (_, i) => ({ ...LIVE, subject: `Report ${i}`, html: html(i), text: `Report ${i}` }));
    const mailed = await postSettled(team.key, "emails/batch", { emails });
    expect(mailed.status).toBe(201);
    const emailIds: string[] = (await json(mailed)).data.map((e: { id: string }) => e.id);
    expect(emailIds).toHaveLength(EMAILS);
    d1.push(await d1Bytes());

    // What each place grew by.
    const grown = {
      relay: (await storeBytes(stores.relay)) - empty.relay,
      surveys: (await storeBytes(stores.surveys)) - empty.surveys,
      push: (await storeBytes(stores.push)) - empty.push,
      r2: 0,
    };
    const bodies = await env.MAIL_BODIES.list({ prefix: `emails/${team.teamId}/` });
    expect(bodies.objects).toHaveLength(EMAILS);
    grown.r2 = bodies.objects.reduce((n, o) => n + o.size, 0);
    const elsewhere = grown.relay + grown.surveys + grown.push + grown.r2;
    const d1Grown = d1[d1.length - 1] - d1[0];
    const figures = {
      msg: "scale workload bytes",
      items: { relay_events: EVENTS, survey_responses: RESPONSES, push_subscribers: SUBSCRIBERS, push_notifications: NOTIFICATIONS, emails: EMAILS },
      d1_before: d1[0],
      d1_grown: d1Grown,
      stores_and_r2_grown: elsewhere,
      d1_share: Number((d1Grown / elsewhere).toFixed(4)),
      relay_store_per_event: Math.round(grown.relay / EVENTS),
      survey_store_per_response: Math.round(grown.surveys / RESPONSES),
      push_store_per_subscriber: Math.round((withSubscribers - empty.push) / SUBSCRIBERS),
      push_store_per_delivery: Math.round((grown.push - (withSubscribers - empty.push)) / (SUBSCRIBERS * NOTIFICATIONS)),
      r2_per_email: Math.round(grown.r2 / EMAILS),
      d1_per_relay_event: Math.round((d1[1] - d1[0]) / EVENTS),
      d1_per_survey_response: Math.round((d1[2] - d1[1]) / RESPONSES),
      d1_per_push_subscriber: Math.round((d1[3] - d1[2]) / SUBSCRIBERS),
      d1_per_push_notification: Math.round((d1[4] - d1[3]) / NOTIFICATIONS),
      d1_per_email: Math.round((d1[5] - d1[4]) / EMAILS),
    };
    console.log(JSON.stringify(figures));

    // Every piece reads back through the API.
    const listed: Array<{ id: string; delivery_status: string }> = [];
    for (let cursor = ""; ; ) {
      const page = await json(await call("GET", `webhooks/sources/${source.id}/events?limit=100${cursor}`, { key: team.key }));
      listed.push(...page.data);
      if (!page.pagination.has_more) break;
      cursor = `&cursor=${encodeURIComponent(page.pagination.next_cursor)}`;
    }
    expect(new Set(listed.map((e) => e.id)).size).toBe(EVENTS);
    expect(listed.every((e) => e.delivery_status === "delivered")).toBe(true);
    const event = (await json(await call("GET", `webhooks/sources/${source.id}/events/${listed[EVENTS - 1].id}`, { key: team.key }))).data;
    expect(JSON.parse(event.body)).toMatchObject({ type: "invoice.paid" });
    expect(event.deliveries).toEqual([expect.objectContaining({ status: "delivered", attempts: [expect.objectContaining({ status_code: 200 })] })]);
    const responses = await json(await call("GET", `surveys/${survey.id}/responses?per_page=100&status=completed`, { key: team.key }));
    expect(responses.pagination.total).toBe(RESPONSES);
    const summary = (await json(await call("GET", `surveys/${survey.id}/summary`, { key: team.key }))).data;
    expect(summary).toMatchObject({ response_count: RESPONSES, responses: { total: RESPONSES, completed: RESPONSES, in_progress: 0 } });
    expect(summary.questions.map((q: { answered: number }) => q.answered)).toEqual([RESPONSES, RESPONSES, RESPONSES]);
    for (const notification of notifications) {
      expect(notification).toMatchObject({ status: "completed", counts: { queued: 0, delivered: SUBSCRIBERS, failed: 0, removed: 0 } });
    }
    const apps = (await json(await call("GET", "push/apps", { key: team.key }))).data;
    expect(apps).toEqual([expect.objectContaining({ id: app.id, subscriber_count: SUBSCRIBERS })]);
    for (const [i, id] of emailIds.entries()) {
      const email = (await json(await call("GET", `emails/${id}`, { key: team.key }))).data;
      expect(email).toMatchObject({ id, subject: `Report ${i}`, text: `Report ${i}` });
      expect(email.html).toBe(emails[i].html);
    }

    // D1 barely grows. Every item still leaves D1 something by design (an email row with its
    // history, a notification row, a survey's 7-day completion key, the quota roll-ups), so the
    // bound is a share: under 10 % of what the stores and R2 took. Measured at ~0.5 %. D1 grows in
    // 4 KB pages and a table's first rows fill its empty root page, which the figure does not
    // see: one more page for each of the ~15 tables touched would still be under 2 %. With the
    // former tables (bodies in the email rows; events, responses, subscribers and deliveries in
    // D1) D1 would have grown by about what the stores and R2 did, a share near 100 %. The R2
    // bodies dominate the total, so the same bound is held without mail: D1's growth in the other
    // phases against the stores'.
    expect(grown.r2).toBeGreaterThan(EMAILS * HTML_BYTES);
    expect(grown.relay).toBeGreaterThan(EVENTS * 1_000);
    expect(grown.surveys).toBeGreaterThan(RESPONSES * 300);
    expect(grown.push).toBeGreaterThan(SUBSCRIBERS * NOTIFICATIONS * 100);
    expect(d1Grown).toBeLessThan(0.1 * elsewhere);
    expect(d1[4] - d1[0]).toBeLessThan(0.1 * (grown.relay + grown.surveys + grown.push));
  }, 60_000);

  it("measures the control plane a team leaves in D1: the team, its key and owner, a source, a push app, a survey", async () => {
    // Many teams, so D1's 4 KB pages (and each table's empty root page) weigh little per team.
    const before = await d1Bytes();
    const teams = 40;
    for (let i = 0; i < teams; i++) {
      const team = await setupTeam();
      const source = await createSource(team.key);
      await createDestination(team.key, source.id);
      await createApp(team.key);
      await activeSurvey(
        [
          { type: "nps", title: "How likely are you to recommend us?" },
          { type: "choice", title: "Plan", options: ["free", "pro", "scale"] },
          { type: "text", title: "Anything else?" },
        ],
        {},
        team,
      );
    }
    const perTeam = Math.round(((await d1Bytes()) - before) / teams);
    console.log(JSON.stringify({ msg: "scale control plane bytes per team", teams, d1_per_team: perTeam }));
    // Rows of a few hundred bytes each (a team, an owner and membership, a key, a sending domain,
    // a source, a destination, an app with its VAPID keys, a survey, three questions) and their
    // indexes: a few KB, far from the megabytes its traffic used to leave.
    expect(perTeam).toBeGreaterThan(1_000);
    expect(perTeam).toBeLessThan(30_000);
  });
});
