// Retention of the tables that grow with traffic (DESIGN.md "Retention"): the hourly jobs delete
// finished rows past DELIVERY_LOG_RETENTION_DAYS in bounded steps and keep what is still in flight.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../src/platform/clock";
import { queuePlatformMail } from "../../src/platform/platform-mail";
import { DELIVERY_LOG_RETENTION_DAYS } from "../../src/platform/retention";
import { mailRetention } from "../../src/products/mail/mail.cron";
import { pushRetention } from "../../src/products/push/push.cron";
import { surveyDeliveryRetention } from "../../src/products/surveys/surveys.cron";
import { call, json, setupTeam } from "../helpers/api";
import { LIVE, postSettled } from "../products/mail/mail-helpers";
import { activeSurvey, answer, complete, startOk } from "../products/surveys/helpers";

const T0 = Date.parse("2026-04-01T10:00:00.000Z");
const LATER = T0 + (DELIVERY_LOG_RETENTION_DAYS + 1) * 86_400_000;

afterEach(() => setClock(null));

async function count(sql: string, ...params: unknown[]): Promise<number> {
  return (await env.DB.prepare(sql)
    .bind(...params)
    .first<{ n: number }>())!.n;
}

describe("retention jobs", () => {
  it("mail: finished emails, their history and finished platform mail go after the retention period; queued ones stay", async () => {
    setClock(T0);
    const team = await setupTeam();
    // Settled: each email's first attempt (from the request's waitUntil, which now reads its body
    // from R2) is over before the test sets the statuses, so it cannot overwrite them.
    const done = (await json(await postSettled(team.key, "emails", LIVE))).data;
    const stuck = (await json(await postSettled(team.key, "emails", LIVE))).data;
    await env.DB.prepare("UPDATE emails SET status = 'delivered' WHERE id = ?").bind(done.id).run();
    await env.DB.prepare("UPDATE emails SET status = 'queued' WHERE id = ?").bind(stuck.id).run();
    const sent = await queuePlatformMail(env, { teamId: team.teamId, kind: "alert", to: "ops@example.com", subject: "s", text: "t" });
    const pending = await queuePlatformMail(env, { teamId: team.teamId, kind: "alert", to: "ops@example.com", subject: "s", text: "t" });
    await env.DB.prepare("UPDATE platform_outbox SET status = 'sent' WHERE id = ?").bind(sent).run();
    await env.DB.prepare("UPDATE platform_outbox SET status = 'pending' WHERE id = ?").bind(pending).run();
    expect(await count("SELECT COUNT(*) AS n FROM email_events WHERE email_id = ?", done.id)).toBeGreaterThan(0);

    // Within the period nothing goes.
    setClock(T0 + 86_400_000);
    await mailRetention(env);
    expect(await count("SELECT COUNT(*) AS n FROM emails WHERE team_id = ?", team.teamId)).toBe(2);

    setClock(LATER);
    const result = await mailRetention(env);
    expect(result.emails).toBeGreaterThanOrEqual(1);
    expect(await count("SELECT COUNT(*) AS n FROM emails WHERE id = ?", done.id)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM emails WHERE id = ?", stuck.id)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM email_events WHERE email_id = ?", done.id)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM platform_outbox WHERE id = ?", sent)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM platform_outbox WHERE id = ?", pending)).toBe(1);
  });

  it("push notifications (with their deliveries) and finished survey webhook deliveries go after the period; pending ones stay", async () => {
    setClock(T0);
    const team = await setupTeam();
    const app = (await json(await call("POST", "push/apps", { key: team.key, body: { name: "r" } }))).data;
    // A finished notification (a notification reaching nobody is refused over the API, 422).
    const notification = { id: crypto.randomUUID() };
    await env.DB.prepare(
      `INSERT INTO push_notifications (id, team_id, app_id, payload, ttl, urgency, target, vapid_subject, recipients, fanout_done, created_at, completed_at)
       VALUES (?1, ?2, ?3, '{}', 60, 'normal', '{"type":"all"}', 'mailto:o@example.com', 1, 1, ?4, ?4)`,
    )
      .bind(notification.id, team.teamId, app.id, new Date(T0).toISOString())
      .run();

    const { survey } = await activeSurvey([{ type: "text", title: "Q" }], {}, team);
    const hook = await call("POST", `surveys/${survey.id}/webhooks`, {
      key: team.key,
      body: { url: "https://hooks.example.com/r", events: ["response.completed"] },
    });
    expect(hook.status).toBe(201);
    for (let i = 0; i < 2; i++) {
      const response = await startOk(survey.slug);
      const question = response.next_question.id;
      await answer(survey.slug, response.id, question, "fine");
      await complete(survey.slug, response.id);
    }
    const deliveries = (await env.DB.prepare("SELECT id FROM survey_webhook_deliveries WHERE survey_id = ? ORDER BY id").bind(survey.id).all<{ id: string }>())
      .results;
    expect(deliveries).toHaveLength(2);
    await env.DB.prepare("UPDATE survey_webhook_deliveries SET status = 'delivered' WHERE id = ?").bind(deliveries[0].id).run();
    await env.DB.prepare("UPDATE survey_webhook_deliveries SET status = 'pending' WHERE id = ?").bind(deliveries[1].id).run();

    setClock(LATER);
    expect(await pushRetention(env)).toBeGreaterThanOrEqual(1);
    expect(await count("SELECT COUNT(*) AS n FROM push_notifications WHERE id = ?", notification.id)).toBe(0);
    expect(await surveyDeliveryRetention(env)).toBeGreaterThanOrEqual(1);
    expect(await count("SELECT COUNT(*) AS n FROM survey_webhook_deliveries WHERE id = ?", deliveries[0].id)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM survey_webhook_deliveries WHERE id = ?", deliveries[1].id)).toBe(1);
  });
});
