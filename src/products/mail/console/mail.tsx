/** @jsxImportSource hono/jsx */
// The mail page: sending domains with the exact DNS record to publish and a verify button that
// shows what DNS answered; recent emails with their status (one email's page in mail-email.tsx);
// mail webhooks with their test button and the secret shown once. The same services as
// /api/v1/domains, /emails and /webhooks.
import { Hono, type Context } from "hono";
import { MAIL_WEBHOOK_EVENTS, type MailWebhookEvent } from "../../../db/schema";
import { ApiError, zodDetails } from "../../../platform/errors";
import { addDomain, deleteDomain, domainView, listDomains, verifyDomain } from "../domains.service";
import { CreateWebhookBody } from "../mail.schemas";
import { listEmails } from "../mail.service";
import { createWebhook, deleteWebhook, listWebhooks, testWebhook } from "../mail-webhooks.service";
import { formList, formText } from "../../../console/forms";
import { Time } from "../../../console/layout";
import { page, redirectTo, teamPath } from "../../../console/render";
import { redirectWithFlash, takeFlash } from "../../../console/flash";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { CopyBlock, pageNumber, Pager, StatusBadge, TableWrap, ColumnHeads } from "../../../console/pages/parts";
import { settings } from "../../../platform/config";
import { MAIL_TONE, mailEmailPages } from "./mail-email";

export const mailPages = new Hono<ConsoleEnv>();
mailPages.route("/", mailEmailPages);

const canWrite = (c: Context<ConsoleEnv>) => roleAtLeast(c.get("consoleTeam").role, "developer");
const apiBase = (c: Context<ConsoleEnv>) => `${settings(c.env).appOrigin}/api/v1`;

const NOTICES = {
  "domain-added": "Domain added. Publish its TXT record, then verify it.",
  "domain-deleted": "Domain removed. Keys can no longer send from it.",
  "webhook-deleted": "Webhook deleted.",
  verified: "Domain verified.",
  tested: "Test delivery sent.",
  "webhook-created": "Webhook added.",
};

/** The notices whose page shows an outcome flashed by the POST (flash.ts). */
const FLASHED = ["verified", "tested", "webhook-created"];

/** What a POST on this page has to show (a verification's DNS answer, a test delivery, a new secret): re-rendered at a refusal's status, or flashed once after a 303. */
interface Outcome {
  verify?: { domainId: string; ok: boolean; lines: string[] };
  test?: { webhookId: string; ok: boolean; text: string };
  created?: { url: string; secret: string };
}

async function mailPage(c: Context<ConsoleEnv>, refused: Outcome = {}, status: 200 | 422 | 503 = 200) {
  const teamId = c.get("consoleTeam").id;
  const writer = canWrite(c);
  const [domains, emails, webhooks, flashed] = await Promise.all([
    listDomains(c.env, teamId),
    listEmails(c.env, teamId, { page: pageNumber(c), per_page: 20 }),
    listWebhooks(c.env, teamId),
    takeFlash<Outcome>(c, ...FLASHED),
  ]);
  const outcome: Outcome = { ...refused, ...flashed };
  const base = teamPath(c, "mail");
  const api = apiBase(c);
  const sender = domains.find((d) => d.status === "verified")?.name ?? "yourdomain.com";
  return page(
    c,
    { title: "Mail", active: "mail", status, notices: NOTICES },
    <>
      <section class="section" aria-labelledby="domains-title">
        <h2 id="domains-title">Sending domains</h2>
        <p class="muted">A live key sends only from a domain verified for this team. Publish the TXT record at your DNS provider, then verify.</p>
        {domains.length === 0 ? (
          <>
            <p class="empty">No sending domain yet.</p>
            {writer ? null : <p class="muted">A developer, admin or owner adds domains.</p>}
            <CopyBlock
              id="add-domain-curl"
              text={`curl -X POST ${api}/domains \\\n  -H "Authorization: Bearer $EDP_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"name": "example.com"}'`}
            />
          </>
        ) : (
          domains.map((row) => {
            const d = domainView(row);
            const record = d.records[0];
            const verify = outcome.verify?.domainId === d.id ? outcome.verify : null;
            return (
              <article class="question-card" data-testid="domain-row" data-status={d.status} data-domain={d.name}>
                <div class="row-actions">
                  <strong>{d.name}</strong>
                  <StatusBadge status={d.status} tone={d.status === "verified" ? "ok" : "warn"} />
                  {d.verified_at ? (
                    <span class="muted small">
                      verified <Time iso={d.verified_at} />
                    </span>
                  ) : null}
                </div>
                <TableWrap label={`DNS record to publish for ${d.name}`}>
                  <table>
                    <caption class="skip">{`DNS record to publish for ${d.name}`}</caption>
                    <ColumnHeads names={["Type", "Name", "Value"]} />
                    <tbody>
                      <tr data-testid="dns-record">
                        <td>{record.type}</td>
                        <td>
                          <code id={`rec-name-${d.id}`}>{record.name}</code>{" "}
                          <button
                            type="button"
                            class="secondary small"
                            data-copy={`#rec-name-${d.id}`}
                            hidden
                            aria-label={`Copy the record name for ${d.name}`}
                          >
                            Copy
                          </button>
                        </td>
                        <td>
                          <code id={`rec-value-${d.id}`}>{record.value}</code>{" "}
                          <button
                            type="button"
                            class="secondary small"
                            data-copy={`#rec-value-${d.id}`}
                            hidden
                            aria-label={`Copy the record value for ${d.name}`}
                          >
                            Copy
                          </button>
                        </td>
                      </tr>
                    </tbody>
                  </table>
                </TableWrap>
                {verify ? (
                  <div class="dns-answer" role="status" data-testid="dns-answer">
                    <strong>{verify.ok ? "Verified: DNS holds the record." : "Not verified yet. What DNS answered:"}</strong>
                    <ul>
                      {verify.lines.map((line) => (
                        <li>{line}</li>
                      ))}
                    </ul>
                  </div>
                ) : null}
                {writer ? (
                  <div class="row-actions">
                    {d.status !== "verified" ? (
                      <form method="post" action={`${base}/domains/${d.id}/verify`} data-testid="verify-domain">
                        <button type="submit" class="small">
                          Verify
                        </button>
                      </form>
                    ) : null}
                    <form method="post" action={`${base}/domains/${d.id}/delete`}>
                      <button type="submit" class="danger small" aria-label={`Remove ${d.name}`}>
                        Remove
                      </button>
                    </form>
                  </div>
                ) : null}
              </article>
            );
          })
        )}
        {writer ? (
          <form method="post" action={`${base}/domains`} class="inline-form" data-testid="add-domain">
            <div class="field">
              <label for="domain-name">Domain</label>
              <input id="domain-name" type="text" name="name" required maxlength={253} placeholder="example.com" />
            </div>
            <button type="submit">Add domain</button>
          </form>
        ) : null}
      </section>

      <section class="section" aria-labelledby="emails-title">
        <h2 id="emails-title">Recent emails</h2>
        {emails.rows.length === 0 ? (
          <>
            <p class="empty">
              No email sent yet. Send the first one with a key that has <code>mail:send</code>:
            </p>
            <CopyBlock
              id="send-email-curl"
              text={`curl -X POST ${api}/emails \\\n  -H "Authorization: Bearer $EDP_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"from": "hello@${sender}", "to": "you@example.com", "subject": "Hello", "html": "<p>It works!</p>"}'`}
            />
          </>
        ) : (
          <>
            <TableWrap label="Emails, newest first">
              <table>
                <caption class="skip">Emails, newest first</caption>
                <ColumnHeads names={["Sent", "To", "Subject", "Stream", "Status"]} />
                <tbody>
                  {emails.rows.map((e) => (
                    <tr data-testid="email-row" data-status={e.status}>
                      <td>
                        <Time iso={e.createdAt} />
                      </td>
                      <td class="cell-clip">{e.to.join(", ")}</td>
                      <td class="cell-clip">
                        <a href={`${base}/emails/${e.id}`}>{e.subject || "(no subject)"}</a>
                      </td>
                      <td>{e.stream}</td>
                      <td>
                        <StatusBadge status={e.status} tone={MAIL_TONE[e.status] ?? "gray"} />
                        {e.sandbox ? <span class="badge warn"> sandbox</span> : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
            <Pager base={base} page={emails.pagination.page} pages={emails.pagination.total_pages} />
          </>
        )}
      </section>

      <section class="section" aria-labelledby="webhooks-title">
        <h2 id="webhooks-title">Webhooks</h2>
        <p class="muted">Get a signed POST when an email is sent, delivered, bounces, is marked as spam or fails.</p>
        {outcome.created && writer ? (
          <div>
            <p class="warning">The signing secret of {outcome.created.url}. Copy it now: it is shown only this once.</p>
            <CopyBlock id="new-webhook-secret" text={outcome.created.secret} />
          </div>
        ) : null}
        {webhooks.length === 0 ? (
          <p class="empty">No webhook yet.</p>
        ) : (
          <TableWrap label="Mail webhooks">
            <table>
              <caption class="skip">Mail webhooks</caption>
              <thead>
                <tr>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Events</th>
                  <th scope="col">Created</th>
                  {writer ? (
                    <th scope="col">
                      <span class="skip">Actions</span>
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {webhooks.map((w) => {
                  const test = outcome.test?.webhookId === w.id ? outcome.test : null;
                  return (
                    <tr data-testid="webhook-row">
                      <td>
                        <code>{w.url}</code>
                        {test ? (
                          <p class={test.ok ? "notice" : "warning"} role="status" data-testid="webhook-test-result">
                            {test.text}
                          </p>
                        ) : null}
                      </td>
                      <td>
                        <span class="scopes">
                          {w.events.map((e) => (
                            <span class="badge gray">{e}</span>
                          ))}
                        </span>
                      </td>
                      <td>
                        <Time iso={w.createdAt} />
                      </td>
                      {writer ? (
                        <td>
                          <div class="row-actions">
                            <form method="post" action={`${base}/webhooks/${w.id}/test`} data-testid="test-webhook">
                              <button type="submit" class="secondary small">
                                Send test
                              </button>
                            </form>
                            <form method="post" action={`${base}/webhooks/${w.id}/delete`}>
                              <button type="submit" class="danger small" aria-label={`Delete the webhook ${w.url}`}>
                                Delete
                              </button>
                            </form>
                          </div>
                        </td>
                      ) : null}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </TableWrap>
        )}
        {writer ? (
          <form method="post" action={`${base}/webhooks`} data-testid="create-webhook">
            <div class="field">
              <label for="webhook-url">Endpoint URL</label>
              <input id="webhook-url" type="text" inputmode="url" name="url" required maxlength={2048} placeholder="https://example.com/hooks/mail" />
            </div>
            <fieldset>
              <legend>Events</legend>
              <div class="checks">
                {MAIL_WEBHOOK_EVENTS.map((event) => (
                  <label class="check">
                    <input type="checkbox" name="events" value={event} checked /> <code>{event}</code>
                  </label>
                ))}
              </div>
            </fieldset>
            <button type="submit">Add webhook</button>
          </form>
        ) : null}
      </section>
    </>,
  );
}

mailPages.get("/mail", (c) => mailPage(c));

mailPages.post("/mail/domains", async (c) => {
  requireRole(c, "developer");
  await addDomain(c.env, c.get("consoleTeam").id, await formText(c, "name"));
  return redirectTo(c, "mail", "domain-added");
});

mailPages.post("/mail/domains/:domain_id/verify", async (c) => {
  requireRole(c, "developer");
  const domainId = c.req.param("domain_id");
  try {
    const row = await verifyDomain(c.env, c.get("consoleTeam").id, domainId);
    const record = domainView(row).records[0];
    return redirectWithFlash(c, "mail", "verified", {
      verify: { domainId: row.id, ok: true, lines: [`TXT ${record.name} holds ${record.value}`] },
    } satisfies Outcome);
  } catch (error) {
    // What DNS answered (422) or that the resolver could not be asked (503); a 404 stays a 404.
    if (!(error instanceof ApiError) || (error.status !== 422 && error.status !== 503)) throw error;
    const lines = error.details ? Object.values(error.details).flat() : [error.message];
    return mailPage(c, { verify: { domainId, ok: false, lines } }, error.status);
  }
});

mailPages.post("/mail/domains/:domain_id/delete", async (c) => {
  requireRole(c, "developer");
  await deleteDomain(c.env, c.get("consoleTeam").id, c.req.param("domain_id"));
  return redirectTo(c, "mail", "domain-deleted");
});

mailPages.post("/mail/webhooks", async (c) => {
  requireRole(c, "developer");
  const parsed = CreateWebhookBody.safeParse({ url: (await formText(c, "url")).trim(), events: await formList(c, "events") });
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  const { row, secret } = await createWebhook(c.env, c.get("consoleTeam").id, { url: parsed.data.url, events: parsed.data.events as MailWebhookEvent[] });
  return redirectWithFlash(c, "mail", "webhook-created", { created: { url: row.url, secret } } satisfies Outcome);
});

mailPages.post("/mail/webhooks/:webhook_id/test", async (c) => {
  requireRole(c, "developer");
  const webhookId = c.req.param("webhook_id");
  let test: NonNullable<Outcome["test"]>;
  try {
    const result = await testWebhook(c.env, c.get("consoleTeam").id, webhookId);
    test = { webhookId, ok: true, text: `Delivered: the endpoint answered HTTP ${result.status_code} in ${result.duration_ms} ms.` };
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 502) throw error;
    test = { webhookId, ok: false, text: `${error.message}: ${String(error.extra?.detail ?? "")}` };
  }
  // The test was sent either way: its outcome is shown once after the redirect, so a reload sends no second one.
  return redirectWithFlash(c, "mail", "tested", { test } satisfies Outcome);
});

mailPages.post("/mail/webhooks/:webhook_id/delete", async (c) => {
  requireRole(c, "developer");
  await deleteWebhook(c.env, c.get("consoleTeam").id, c.req.param("webhook_id"));
  return redirectTo(c, "mail", "webhook-deleted");
});
