// What an email costs D1 now that its body is in R2, measured from real rows (the arithmetic of
// the README's "Where emails live"): 200 typical emails (a 5 KB html body and its text, one
// recipient, a tag, a custom header) sent through the API and delivered, then the database's size as D1
// reports it before and after (rows, history rows and every index), and the bytes in R2.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, json, setupTeam } from "../../helpers/api";
import { LIVE } from "./mail-helpers";

/** The database's size as D1 reports it with every query (`meta.size_after`, pages in use). */
async function databaseBytes(): Promise<number> {
  return (await env.DB.prepare("SELECT 1").run()).meta.size_after;
}

describe("bytes per email", () => {
  it("a delivered email with a 5 KB body costs D1 under 2 KB with its history and indexes; the body is in R2", async () => {
    const team = await setupTeam();
    const html = `<p>${"Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(90)}</p>`.slice(0, 5_000);
    const item = {
      ...LIVE,
      to: "Ada Lovelace <ada@example.com>",
      html,
      text: html.replace(/<[^>]+>/g, ""),
      tags: ["welcome"],
      headers: { "X-Campaign": "spring-2026" },
    };
    const before = await databaseBytes();
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await call("POST", "emails/batch", { key: team.key, body: { emails: Array.from({ length: 100 }, () => item) } });
      expect(res.status).toBe(201);
      ids.push(...(await json(res)).data.map((e: { id: string }) => e.id));
    }
    const queued = ((await databaseBytes()) - before) / ids.length;
    // Delivered, as most rows are for most of their 30 days: queued, sent and delivered history rows.
    const at = new Date().toISOString();
    await env.DB.batch(
      ids.flatMap((id) => [
        env.DB.prepare("UPDATE emails SET status = 'delivered', attempts = 1, updated_at = ? WHERE id = ?").bind(at, id),
        ...["sent", "delivered"].map((status) =>
          env.DB.prepare("INSERT INTO email_events (id, email_id, team_id, status, detail, created_at) VALUES (?, ?, ?, ?, ?, ?)").bind(
            crypto.randomUUID(),
            id,
            team.teamId,
            status,
            status === "delivered" ? "stored in the local outbox" : null,
            at,
          ),
        ),
      ]),
    );
    const perEmail = ((await databaseBytes()) - before) / ids.length;
    const r2 = await env.MAIL_BODIES.list({ prefix: `emails/${team.teamId}/` });
    const bodyBytes = r2.objects.reduce((n, o) => n + o.size, 0) / r2.objects.length;
    console.log(JSON.stringify({ msg: "bytes per email", d1Queued: Math.round(queued), d1Delivered: Math.round(perEmail), r2: Math.round(bodyBytes) }));
    expect(r2.objects).toHaveLength(ids.length);
    // Every piece reads back through the API.
    const read = (await json(await call("GET", `emails/${ids[150]}`, { key: team.key }))).data;
    expect(read).toMatchObject({ html: item.html, text: item.text, status: "delivered" });
    expect(read.history.map((h: { status: string }) => h.status)).toEqual(expect.arrayContaining(["queued", "sent", "delivered"]));
    expect(bodyBytes).toBeGreaterThan(9_000);
    expect(perEmail).toBeGreaterThan(200);
    // Pages are 4 KB, so the figure moves in steps; with the body in the row it would be ~11 KB more.
    expect(perEmail).toBeLessThan(2_048);
  });
});
