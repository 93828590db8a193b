/** @jsxImportSource hono/jsx */
// The Webhook relay's event page at `relay/sources/:source_id/events/:event_id`: every attempt
// (time, status, code, latency, the answer's start), the payload and its headers (secret-like
// values masked for viewers), and replay to all or to chosen destinations (post/redirect/get).
import { Hono, type Context } from "hono";
import { getDb } from "../../../db/client";
import { getTeam } from "../../../platform/admin/admin.service";
import { ApiError, zodDetails, type FieldErrors } from "../../../platform/errors";
import { backgroundOf } from "../../../platform/request-context";
import { listDestinations } from "../relay-destinations.service";
import { getEvent } from "../relay-events.service";
import { replayEvent } from "../relay-replay.service";
import { getSource } from "../relay-sources.service";
import { ReplayBody } from "../relay.schemas";
import { Time } from "../../../console/layout";
import { formList } from "../../../console/forms";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { Errors, fragment, Live, ColumnHeads, TableWrap } from "../../../console/pages/parts";
import { ANSWER_EXCERPT, DeliveryBadge, maskedHeader } from "./relay-parts";

export const relayEventPages = new Hono<ConsoleEnv>();

// ---------------------------------------------------------------------------------------------
// An event

const EVENT_NOTICES = {
  replayed: "Replay queued. New attempts appear below as they happen.",
  nothing: "No destination admits this event now: nothing was queued.",
};

/** The payload as stored, indented when it is JSON. */
function payloadText(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

type Delivery = Awaited<ReturnType<typeof getEvent>>["deliveries"][number];

/** Whether a delivery of the event still waits for an attempt (the page refreshes its attempts while so). */
function isPending(deliveries: Delivery[]): boolean {
  return deliveries.some((d) => d.status === "pending" || d.status === "sending");
}

/** The deliveries of an event, newest first, each with its attempts. */
function Deliveries(props: { status: string; deliveries: Delivery[]; urlOf: Map<string, string> }) {
  const { deliveries, urlOf } = props;
  return (
    <>
      <p>
        Status <DeliveryBadge status={props.status} />
      </p>
      {deliveries.length === 0 ? <p class="muted">This event was not sent anywhere: no destination admitted it when it arrived.</p> : null}
      {deliveries.map((d) => (
        <div class="delivery" data-testid="delivery">
          <h3>
            <code class="wrap">{urlOf.get(d.destination_id) ?? "removed destination"}</code> <DeliveryBadge status={d.status} />{" "}
            <span class="muted small">{d.trigger === "replay" ? "replay" : "on arrival"}</span>
          </h3>
          {d.attempts.length === 0 ? (
            <p class="muted small">No attempt yet{d.next_attempt_at ? "; the next is planned" : ""}.</p>
          ) : (
            <TableWrap label="Attempts of this delivery">
              <table>
                <caption class="skip">Attempts of this delivery</caption>
                <ColumnHeads names={["#", "Time", "Result", "Code", "Latency", "Answer"]} />
                <tbody>
                  {d.attempts.map((a) => {
                    const ok = a.status_code !== null && a.status_code >= 200 && a.status_code < 300;
                    const answer = (a.response_body || a.error || "").slice(0, ANSWER_EXCERPT);
                    return (
                      <tr data-testid="attempt-row" data-status-code={a.status_code ?? ""}>
                        <td>{a.number}</td>
                        <td>
                          <Time iso={a.attempted_at} />
                        </td>
                        <td>{ok ? <span class="badge ok">ok</span> : <span class="badge danger">failed</span>}</td>
                        <td>{a.status_code ?? "—"}</td>
                        <td>{a.duration_ms === null ? "—" : `${a.duration_ms} ms`}</td>
                        <td>
                          <code class="wrap small">{answer || "(empty)"}</code>
                          {a.retry_in_seconds !== null ? <span class="muted small"> · retry in {a.retry_in_seconds} s</span> : null}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </TableWrap>
          )}
        </div>
      ))}
      {isPending(deliveries) ? <p class="muted small">Attempts still pending: this list refreshes itself (or reload).</p> : null}
    </>
  );
}

async function eventPage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors } = {}, status: 200 | 422 = 200) {
  const team = c.get("consoleTeam");
  const sourceId = c.req.param("source_id") ?? "";
  const eventId = c.req.param("event_id") ?? "";
  const [source, destinations, event] = await Promise.all([
    getSource(c.env, team.id, sourceId),
    listDestinations(c.env, team.id, sourceId),
    getEvent(c.env, team.id, sourceId, eventId),
  ]);
  const canWrite = roleAtLeast(team.role, "developer");
  const base = teamPath(c, `relay/sources/${sourceId}`);
  const urlOf = new Map(destinations.map((d) => [d.id, d.url]));
  // Newest delivery first: a replay's attempts above the first delivery's.
  const deliveries = [...event.deliveries].reverse();
  return page(
    c,
    { title: event.event_type ?? "Event", active: "relay", status, notices: EVENT_NOTICES },
    <>
      <p class="breadcrumbs small">
        <a href={teamPath(c, "relay")}>Webhook relay</a> / <a href={base}>{source.name}</a> / event
      </p>
      <section class="section">
        <dl class="facts">
          <dt>Received</dt>
          <dd>
            <Time iso={event.received_at} />
          </dd>
          <dt>Type</dt>
          <dd>
            <code>{event.event_type ?? "(none)"}</code>
          </dd>
          <dt>Size</dt>
          <dd>{event.size_bytes.toLocaleString("en-US")} bytes</dd>
          <dt>Event id</dt>
          <dd>
            <code>{event.id}</code>
          </dd>
        </dl>
      </section>

      <section class="section" aria-labelledby="attempts-title">
        <h2 id="attempts-title">Deliveries</h2>
        <Live url={`${base}/events/${eventId}/deliveries`} pending={isPending(deliveries)} testid="deliveries">
          <Deliveries status={event.delivery_status} deliveries={deliveries} urlOf={urlOf} />
        </Live>
        {canWrite ? (
          <form method="post" action={`${base}/events/${eventId}/replay`} data-testid="replay" class="replay">
            <h3>Replay</h3>
            <Errors errors={extra.errors} />
            {destinations.length === 0 ? (
              <p class="muted">Add a destination to the source first.</p>
            ) : (
              <>
                <fieldset>
                  <legend>Send this event again to</legend>
                  {destinations.map((d) => (
                    <label class="check">
                      <input type="checkbox" name="destination_ids" value={d.id} disabled={!d.enabled} /> <code class="wrap">{d.url}</code>
                      {d.enabled ? null : <span class="muted small"> (disabled)</span>}
                    </label>
                  ))}
                </fieldset>
                <p class="hint muted small">
                  Tick none to send it to every enabled destination whose filter admits it. Each delivery counts against the month's webhooks quota.
                </p>
                <button type="submit">Replay</button>
              </>
            )}
          </form>
        ) : null}
      </section>

      <section class="section" aria-labelledby="payload-title">
        <h2 id="payload-title">Payload</h2>
        <p class="muted small">{event.content_type ?? "no content type"}</p>
        <pre class="code-sample payload" data-testid="payload">
          {payloadText(event.body)}
        </pre>
        <details>
          <summary>Headers</summary>
          <dl class="facts">
            {Object.entries(event.headers)
              .map(([name, value]) => [name, canWrite ? value : maskedHeader(name, value)])
              .map(([name, value]) => (
                <>
                  <dt>
                    <code>{name}</code>
                  </dt>
                  <dd>
                    <code class="wrap">{value}</code>
                  </dd>
                </>
              ))}
          </dl>
        </details>
      </section>
    </>,
  );
}

relayEventPages.get("/relay/sources/:source_id/events/:event_id", (c) => eventPage(c));

relayEventPages.post("/relay/sources/:source_id/events/:event_id/replay", async (c) => {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const chosen = await formList(c, "destination_ids");
  const parsed = ReplayBody.safeParse(chosen.length ? { destination_ids: chosen } : {});
  if (!parsed.success) return eventPage(c, { errors: zodDetails(parsed.error) }, 422);
  const team = await getTeam(getDb(c.env.DB), teamId);
  const sourceId = c.req.param("source_id");
  const eventId = c.req.param("event_id");
  try {
    const result = await replayEvent(
      c.env,
      { teamId, plan: team.plan, ownerEmail: team.ownerEmail },
      sourceId,
      eventId,
      backgroundOf(c),
      parsed.data.destination_ids,
    );
    return redirectTo(c, `relay/sources/${sourceId}/events/${eventId}`, result.count > 0 ? "replayed" : "nothing");
  } catch (error) {
    if (error instanceof ApiError && error.code === "validation") return eventPage(c, { errors: error.details }, 422);
    throw error;
  }
});

// The deliveries part alone, refreshed by the page while an attempt is pending (client/live.ts).
relayEventPages.get("/relay/sources/:source_id/events/:event_id/deliveries", async (c) => {
  const teamId = c.get("consoleTeam").id;
  const sourceId = c.req.param("source_id");
  const eventId = c.req.param("event_id");
  const [destinations, event] = await Promise.all([listDestinations(c.env, teamId, sourceId), getEvent(c.env, teamId, sourceId, eventId)]);
  const deliveries = [...event.deliveries].reverse();
  return fragment(
    c,
    <Live url={teamPath(c, `relay/sources/${sourceId}/events/${eventId}/deliveries`)} pending={isPending(deliveries)} testid="deliveries">
      <Deliveries status={event.delivery_status} deliveries={deliveries} urlOf={new Map(destinations.map((d) => [d.id, d.url]))} />
    </Live>,
  );
});
