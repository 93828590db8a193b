/** @jsxImportSource hono/jsx */
// One email of the mail page at `mail/emails/:email_id`: its status history and its html in a
// sandboxed preview (an iframe with `sandbox`, served from its own route with a CSP that runs
// nothing). The same service as GET /api/v1/emails/{id}.
import { Hono } from "hono";
import { emailView, getEmail } from "../mail.service";
import { Time } from "../../../console/layout";
import { page, teamPath } from "../../../console/render";
import { PAGE_HEADERS, type ConsoleEnv } from "../../../console/session";
import { StatusBadge } from "../../../console/pages/parts";

export const mailEmailPages = new Hono<ConsoleEnv>();

/** An email's status as a badge tone (shared with the mail page's list). */
export const MAIL_TONE: Record<string, string> = { queued: "gray", sent: "", delivered: "ok", bounced: "danger", complained: "danger", failed: "danger" };

/** The email page frames its preview: the console's CSP with frames from this origin allowed. */
const FRAMING_CSP = `${PAGE_HEADERS["content-security-policy"]}; frame-src 'self'`;
/**
 * The preview of an email's html: nothing runs (no script, no plugin, no form, no navigation, a
 * unique origin), nothing loads from anywhere (remote images would tell the sender the mail was
 * opened), and only the console itself may frame it.
 */
const PREVIEW_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox; frame-ancestors 'self'; form-action 'none'; base-uri 'none'";

mailEmailPages.get("/mail/emails/:email_id", async (c) => {
  const { row, history } = await getEmail(c.env, c.get("consoleTeam").id, c.req.param("email_id"));
  const e = emailView(row, history);
  c.header("content-security-policy", FRAMING_CSP);
  const base = teamPath(c, "mail");
  return page(
    c,
    { title: e.subject || "(no subject)", active: "mail" },
    <>
      <div class="row-actions">
        <a href={base}>← Mail</a>
        <StatusBadge status={e.status} tone={MAIL_TONE[e.status] ?? "gray"} />
        <span class="muted small">{e.stream}</span>
      </div>
      <section class="section">
        <dl class="meta-list">
          <dt>From</dt>
          <dd>{e.from}</dd>
          <dt>To</dt>
          <dd>{e.to.join(", ")}</dd>
          {e.cc.length ? (
            <>
              <dt>Cc</dt>
              <dd>{e.cc.join(", ")}</dd>
            </>
          ) : null}
          <dt>Created</dt>
          <dd>
            <Time iso={e.created_at} />
          </dd>
          {e.last_error ? (
            <>
              <dt>Last error</dt>
              <dd>{e.last_error}</dd>
            </>
          ) : null}
        </dl>
      </section>
      <section class="section" aria-labelledby="history-title">
        <h2 id="history-title">History</h2>
        <ol class="timeline" data-testid="email-history">
          {(e.history ?? []).map((h) => (
            <li>
              <StatusBadge status={h.status} tone={MAIL_TONE[h.status] ?? "gray"} /> <Time iso={h.at} />
              {h.detail ? <span class="muted small"> · {h.detail}</span> : null}
            </li>
          ))}
        </ol>
      </section>
      <section class="section" aria-labelledby="preview-title">
        <h2 id="preview-title">Preview</h2>
        {e.html ? (
          <>
            <p class="muted small">Shown in a sandbox: scripts, forms and remote images in the email do not run or load here.</p>
            <iframe
              class="preview"
              src={`${base}/emails/${e.id}/preview`}
              sandbox=""
              title={`Preview of the email “${e.subject}”`}
              referrerpolicy="no-referrer"
              loading="lazy"
              data-testid="email-preview"
            ></iframe>
          </>
        ) : (
          <pre class="dns-answer">{e.text ?? "This email has no body."}</pre>
        )}
      </section>
    </>,
  );
});

mailEmailPages.get("/mail/emails/:email_id/preview", async (c) => {
  const { row } = await getEmail(c.env, c.get("consoleTeam").id, c.req.param("email_id"));
  c.header("content-security-policy", PREVIEW_CSP);
  c.header("x-frame-options", "SAMEORIGIN");
  return c.body(row.html ?? "", 200, { "content-type": "text/html; charset=utf-8" });
});
