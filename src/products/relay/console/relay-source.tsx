/** @jsxImportSource hono/jsx */
// A relay source's page at `relay/sources/:source_id`: its ingest address with a copy button,
// destinations with their health and filter (each opening to its edit form), adding one (its
// signing secret shown once through the flash), and events newest first with each destination's
// status. Reads and writes go through the services of /api/v1/webhooks.
import { Hono, type Context } from "hono";
import { ApiError, zodDetails, type FieldErrors } from "../../../platform/errors";
import { createDestination, listDestinations } from "../relay-destinations.service";
import { eventDestinationStatuses, listEvents } from "../relay-events.service";
import { getSource } from "../relay-sources.service";
import { CreateDestinationBody } from "../relay.schemas";
import { Time } from "../../../console/layout";
import { formText } from "../../../console/forms";
import { page, teamPath } from "../../../console/render";
import { redirectWithFlash, takeFlash } from "../../../console/flash";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { Errors, SecretValue, ColumnHeads, TableWrap } from "../../../console/pages/parts";
import { DeliveryBadge, filterTypes, Health, SENDER_NAMES } from "./relay-parts";

export const relaySourcePages = new Hono<ConsoleEnv>();

/** Events per page of a source. */
const EVENTS_PAGE = 50;

// ---------------------------------------------------------------------------------------------
// A source

const SOURCE_NOTICES = {
  created: "Source created. Give its address to the sender, then add a destination.",
  "destination-added": "Destination added.",
  "destination-saved": "Destination saved.",
  "destination-deleted": "Destination deleted: nothing more is sent to it.",
  saved: "Source settings saved.",
};

/** The flash of a new destination: its signing secret, shown once on the source's page. */
type DestinationFlash = { url: string; secret: string };

async function sourcePage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors; url?: string; filter?: string } = {}, status: 200 | 422 = 200) {
  const team = c.get("consoleTeam");
  const sourceId = c.req.param("source_id") ?? "";
  const cursor = c.req.query("cursor") || undefined;
  const [source, destinations, events, created] = await Promise.all([
    getSource(c.env, team.id, sourceId),
    listDestinations(c.env, team.id, sourceId),
    listEvents(c.env, team.id, sourceId, { limit: EVENTS_PAGE, cursor }),
    takeFlash<DestinationFlash>(c, "destination-added"),
  ]);
  const statuses = await eventDestinationStatuses(
    c.env,
    team.id,
    sourceId,
    events.data.map((e) => e.id),
  );
  const canWrite = roleAtLeast(team.role, "developer");
  // An unsigned source's address is its only credential: viewers (read only, never a secret) do not see it.
  const hideIngest = !canWrite && !source.signature_verification;
  const base = teamPath(c, `relay/sources/${sourceId}`);
  // A destination as a chip names it: host and path, cut short.
  const hostOf = (url: string) => {
    try {
      const u = new URL(url);
      const name = `${u.host}${u.pathname === "/" ? "" : u.pathname}`;
      return name.length > 40 ? `${name.slice(0, 39)}…` : name;
    } catch {
      return url;
    }
  };
  return page(
    c,
    { title: source.name, active: "relay", status, notices: SOURCE_NOTICES },
    <>
      <p class="breadcrumbs small">
        <a href={teamPath(c, "relay")}>Webhook relay</a> / {source.name}
      </p>
      <section class="section">
        <h2>Ingest address</h2>
        <p class="muted small">
          Give this address to {SENDER_NAMES[source.provider]} as its webhook URL. Anyone who has it can send events
          {source.signature_verification ? " signed with your secret" : ""}.
        </p>
        {hideIngest ? (
          <p class="small muted" data-testid="ingest-url-hidden">
            This source checks no signature, so its address is all a sender needs: only developers, admins and owners see it.
          </p>
        ) : (
          <SecretValue id="ingest-url" value={source.url} />
        )}
        <p class="small muted">
          {source.signature_verification ? "Signatures are verified." : "Signatures are not checked (no signing secret)."} Events are kept{" "}
          {source.retention_days} days.
          {source.enabled ? "" : " This source is paused: it answers 410 to senders."}
        </p>
        {canWrite ? (
          <p>
            <a class="button secondary small" href={`${base}/settings`} data-testid="source-settings">
              Settings
            </a>
          </p>
        ) : null}
      </section>

      {created ? (
        <section class="section" aria-labelledby="new-secret-title">
          <h2 id="new-secret-title">Destination added</h2>
          <p>
            Events are forwarded to <code>{created.url}</code>, signed with this secret (Standard Webhooks headers <code>webhook-id</code>,{" "}
            <code>webhook-timestamp</code>, <code>webhook-signature</code>).
          </p>
          <p class="warning">Copy the signing secret now. It is shown only this once.</p>
          <SecretValue id="new-secret" value={created.secret} />
        </section>
      ) : c.req.query("notice") === "destination-added" ? (
        <p class="muted">The destination's signing secret was shown once and is not shown again.</p>
      ) : null}

      <section class="section" aria-labelledby="destinations-title">
        <h2 id="destinations-title">Destinations</h2>
        {destinations.length === 0 ? (
          <p class="muted">No destinations yet: events are stored but go nowhere. Add the URL that should receive them.</p>
        ) : (
          <TableWrap label="Destinations of the source">
            <table>
              <caption class="skip">Destinations of the source</caption>
              <ColumnHeads names={["URL", "Events", "Health", "Added"]} />
              <tbody>
                {destinations.map((d) => (
                  <tr data-testid="destination-row">
                    <td>
                      {canWrite ? (
                        <a href={`${base}/destinations/${d.id}`} aria-label={`Edit destination ${d.url}`}>
                          <code class="wrap">{d.url}</code>
                        </a>
                      ) : (
                        <code class="wrap">{d.url}</code>
                      )}
                    </td>
                    <td>{d.event_filter.length === 0 ? <span class="muted">all</span> : d.event_filter.map((f) => <span class="badge gray">{f}</span>)}</td>
                    <td>
                      <Health d={d} />
                    </td>
                    <td>
                      <Time iso={d.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
        {canWrite ? (
          <form method="post" action={`${base}/destinations`} data-testid="create-destination" class="subform">
            <h3>Add a destination</h3>
            <Errors errors={extra.errors} />
            <div class="inline-form">
              <div class="field grow">
                <label for="destination-url">URL</label>
                <input
                  id="destination-url"
                  type="url"
                  name="url"
                  required
                  maxlength={2048}
                  value={extra.url ?? ""}
                  placeholder="https://example.com/webhooks"
                />
              </div>
              <div class="field">
                <label for="destination-filter">Only these event types (optional)</label>
                <input id="destination-filter" type="text" name="event_filter" value={extra.filter ?? ""} placeholder="invoice.paid, customer.*" />
              </div>
              <div class="field">
                <button type="submit">Add destination</button>
              </div>
            </div>
          </form>
        ) : null}
      </section>

      <section class="section" aria-labelledby="events-title">
        <h2 id="events-title">Events</h2>
        {events.data.length === 0 && !cursor ? (
          <div class="empty-state" data-testid="events-empty">
            {hideIngest ? (
              <p>No events yet.</p>
            ) : (
              <>
                <p>No events yet. Send a test event to the ingest address:</p>
                <div class="secret">
                  <pre
                    class="code-sample"
                    id="test-event"
                  >{`curl -X POST ${source.url} \\\n  -H "Content-Type: application/json" \\\n  -d '{"type": "test.ping", "id": "evt_1", "data": {"hello": "world"}}'`}</pre>
                  <button type="button" class="secondary small" data-copy="#test-event" hidden>
                    Copy
                  </button>
                </div>
              </>
            )}
          </div>
        ) : (
          <TableWrap label="Events of the source, newest first">
            <table>
              <caption class="skip">Events of the source, newest first</caption>
              <ColumnHeads names={["Received", "Type", "Status", "Destinations"]} />
              <tbody>
                {events.data.map((e) => {
                  const perDestination = statuses.get(e.id) ?? new Map<string, string>();
                  return (
                    <tr data-testid="event-row" data-status={e.delivery_status}>
                      <td>
                        <a href={`${base}/events/${e.id}`}>
                          <Time iso={e.received_at} />
                        </a>
                      </td>
                      <td>
                        <code>{e.event_type ?? "(no type)"}</code>
                      </td>
                      <td>
                        <DeliveryBadge status={e.delivery_status} />
                      </td>
                      <td>
                        <ul class="chips">
                          {destinations
                            .filter((d) => perDestination.has(d.id))
                            .map((d) => (
                              <li>
                                <span class="muted small">{hostOf(d.url)}</span> <DeliveryBadge status={perDestination.get(d.id)!} />
                              </li>
                            ))}
                        </ul>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </TableWrap>
        )}
        <nav class="pager" aria-label="Pages">
          {cursor ? <a href={base}>Newest</a> : null}
          {events.pagination.next_cursor ? (
            <a href={`${base}?cursor=${encodeURIComponent(events.pagination.next_cursor)}`} rel="next">
              Older events
            </a>
          ) : null}
        </nav>
      </section>
    </>,
  );
}

relaySourcePages.get("/relay/sources/:source_id", (c) => sourcePage(c));

// The form's own address opened (a bookmark, the address bar of an older console): the source's page.
relaySourcePages.get("/relay/sources/:source_id/destinations", (c) => c.redirect(teamPath(c, `relay/sources/${c.req.param("source_id")}`), 303));

relaySourcePages.post("/relay/sources/:source_id/destinations", async (c) => {
  requireRole(c, "developer");
  const url = await formText(c, "url");
  const filter = await formText(c, "event_filter");
  const types = filterTypes(filter);
  const parsed = CreateDestinationBody.safeParse({ url, ...(types.length ? { event_filter: types } : {}) });
  if (!parsed.success) return sourcePage(c, { errors: zodDetails(parsed.error), url, filter }, 422);
  try {
    const created = await createDestination(c.env, c.get("consoleTeam").id, c.req.param("source_id"), parsed.data);
    return redirectWithFlash(c, `relay/sources/${c.req.param("source_id")}`, "destination-added", {
      url: created.url,
      secret: created.secret,
    } satisfies DestinationFlash);
  } catch (error) {
    // A refused URL (SSRF guard) or the cap: the form again with what the service said.
    if (error instanceof ApiError && error.code === "validation") return sourcePage(c, { errors: error.details, url, filter }, 422);
    throw error;
  }
});
