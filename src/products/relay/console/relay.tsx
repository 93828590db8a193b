/** @jsxImportSource hono/jsx */
// The Webhook relay pages: the team's sources at `relay` (create one), a source at
// `relay/sources/:source_id` (its ingest address with a copy button, destinations with their
// health and filter, events newest first with each destination's status), and an event at
// `relay/sources/:source_id/events/:event_id` (every attempt: time, status, code, latency, the
// answer's start; the payload; replay to all or to chosen destinations). Every read and write
// goes through the services of /api/v1/webhooks, under the same tenancy, caps and quota.
import { Hono, type Context } from "hono";
import { ApiError, zodDetails, type FieldErrors } from "../../../platform/errors";
import { createDestination, listDestinations } from "../relay-destinations.service";
import { eventDestinationStatuses, listEvents } from "../relay-events.service";
import { createSource, getSource, listSources } from "../relay-sources.service";
import { CreateDestinationBody, CreateSourceBody, PROVIDERS } from "../relay.schemas";
import { Time } from "../../../console/layout";
import { formText } from "../../../console/forms";
import { page, redirectTo, teamPath } from "../../../console/render";
import { redirectWithFlash, takeFlash } from "../../../console/flash";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { Errors, StatusBadge } from "./relay-parts";
import { relayEventPages } from "./relay-event";

export const relayPages = new Hono<ConsoleEnv>();
// An event's page and its replay (relay-event.tsx).
relayPages.route("/", relayEventPages);

/** Events per page of a source. */
const EVENTS_PAGE = 50;
const _ANSWER_EXCERPT = 160;

const PROVIDER_LABELS: Record<(typeof PROVIDERS)[number], string> = {
  stripe: "Stripe",
  github: "GitHub",
  standard: "Standard Webhooks, Svix",
  generic: "Other (HMAC or none)",
};

/** Who a source's address is given to, in a sentence. */
const SENDER_NAMES: Record<(typeof PROVIDERS)[number], string> = { stripe: "Stripe", github: "GitHub", standard: "the sender", generic: "the sender" };

// ---------------------------------------------------------------------------------------------
// Sources

async function sourcesPage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors; name?: string } = {}, status: 200 | 422 = 200) {
  const team = c.get("consoleTeam");
  const sources = await listSources(c.env, team.id);
  const canWrite = roleAtLeast(team.role, "developer");
  const base = teamPath(c, "relay/sources");
  return page(
    c,
    { title: "Webhook relay", active: "relay", status },
    <>
      <section class="section">
        <h2>Sources</h2>
        {sources.length === 0 ? (
          <div class="empty-state">
            <p>
              No sources yet. A source is a public address you give a sender (Stripe, GitHub, your own app); every event it receives is stored and forwarded,
              signed, to your destinations.
            </p>
            {canWrite ? <p>Create the first one below.</p> : <p class="muted">A developer, admin or owner of the team creates sources.</p>}
          </div>
        ) : (
          <div class="table-wrap" role="region" aria-label="Webhook sources of the team" tabindex={0}>
            <table>
              <caption class="skip">Webhook sources of the team</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Sender</th>
                  <th scope="col">Destinations</th>
                  <th scope="col">Signatures</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {sources.map((s) => (
                  <tr data-testid="source-row">
                    <td>
                      <a href={`${base}/${s.id}`}>{s.name}</a>
                    </td>
                    <td>{s.provider}</td>
                    <td>{s.destinations_count}</td>
                    <td>{s.signature_verification ? "verified" : <span class="muted">not checked</span>}</td>
                    <td>{s.enabled ? <span class="badge ok">receiving</span> : <span class="badge gray">paused</span>}</td>
                    <td>
                      <Time iso={s.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {canWrite ? (
        <form method="post" action={teamPath(c, "relay")} class="section" data-testid="create-source">
          <h2>Create a source</h2>
          <Errors errors={extra.errors} />
          <div class="inline-form">
            <div class="field">
              <label for="source-name">Name</label>
              <input id="source-name" type="text" name="name" required maxlength={200} value={extra.name ?? ""} placeholder="Stripe payments" />
            </div>
            <div class="field">
              <label for="source-provider">Sender</label>
              <select id="source-provider" name="provider">
                {PROVIDERS.map((p) => (
                  <option value={p} selected={p === "generic"}>
                    {PROVIDER_LABELS[p]}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="source-secret">Signing secret (optional)</label>
              <input id="source-secret" type="password" name="signing_secret" autocomplete="off" maxlength={1024} />
            </div>
            <div class="field">
              <button type="submit">Create source</button>
            </div>
          </div>
          <p class="hint muted small">
            With the sender's signing secret, events whose signature does not match are refused. The secret is stored encrypted and never shown again.
          </p>
        </form>
      ) : null}
    </>,
  );
}

relayPages.get("/relay", (c) => sourcesPage(c));

relayPages.post("/relay", async (c) => {
  requireRole(c, "developer");
  const name = await formText(c, "name");
  const secret = await formText(c, "signing_secret");
  const parsed = CreateSourceBody.safeParse({ name, provider: await formText(c, "provider"), ...(secret ? { signing_secret: secret } : {}) });
  if (!parsed.success) return sourcesPage(c, { errors: zodDetails(parsed.error), name }, 422);
  const source = await createSource(c.env, c.get("consoleTeam").id, parsed.data);
  return redirectTo(c, `relay/sources/${source.id}`, "created");
});

// ---------------------------------------------------------------------------------------------
// A source

const SOURCE_NOTICES = {
  created: "Source created. Give its address to the sender, then add a destination.",
  "destination-added": "Destination added.",
};

/** The flash of a new destination: its signing secret, shown once on the source's page. */
type DestinationFlash = { url: string; secret: string };

function Health(props: { d: { enabled: boolean; disabled_reason: string | null; failing_since: string | null } }) {
  const { d } = props;
  if (!d.enabled) return <span class="badge gray">{d.disabled_reason === "failing" ? "disabled: failing for 5 days" : "disabled"}</span>;
  if (d.failing_since) {
    return (
      <span class="badge danger">
        failing since <Time iso={d.failing_since} />
      </span>
    );
  }
  return <span class="badge ok">healthy</span>;
}

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
          <div class="secret">
            <code id="ingest-url" data-testid="ingest-url">
              {source.url}
            </code>
            <button type="button" class="secondary small" data-copy="#ingest-url" hidden>
              Copy
            </button>
          </div>
        )}
        <p class="small muted">
          {source.signature_verification ? "Signatures are verified." : "Signatures are not checked (no signing secret)."} Events are kept{" "}
          {source.retention_days} days.
          {source.enabled ? "" : " This source is paused: it answers 404 to senders."}
        </p>
      </section>

      {created ? (
        <section class="section" aria-labelledby="new-secret-title">
          <h2 id="new-secret-title">Destination added</h2>
          <p>
            Events are forwarded to <code>{created.url}</code>, signed with this secret (Standard Webhooks headers <code>webhook-id</code>,{" "}
            <code>webhook-timestamp</code>, <code>webhook-signature</code>).
          </p>
          <p class="warning">Copy the signing secret now. It is shown only this once.</p>
          <div class="secret">
            <code id="new-secret" data-testid="new-secret">
              {created.secret}
            </code>
            <button type="button" class="secondary small" data-copy="#new-secret" hidden>
              Copy
            </button>
          </div>
        </section>
      ) : c.req.query("notice") === "destination-added" ? (
        <p class="muted">The destination's signing secret was shown once and is not shown again.</p>
      ) : null}

      <section class="section" aria-labelledby="destinations-title">
        <h2 id="destinations-title">Destinations</h2>
        {destinations.length === 0 ? (
          <p class="muted">No destinations yet: events are stored but go nowhere. Add the URL that should receive them.</p>
        ) : (
          <div class="table-wrap" role="region" aria-label="Destinations of the source" tabindex={0}>
            <table>
              <caption class="skip">Destinations of the source</caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Health</th>
                  <th scope="col">Added</th>
                </tr>
              </thead>
              <tbody>
                {destinations.map((d) => (
                  <tr data-testid="destination-row">
                    <td>
                      <code class="wrap">{d.url}</code>
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
          </div>
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
          <div class="table-wrap" role="region" aria-label="Events of the source, newest first" tabindex={0}>
            <table>
              <caption class="skip">Events of the source, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Received</th>
                  <th scope="col">Type</th>
                  <th scope="col">Status</th>
                  <th scope="col">Destinations</th>
                </tr>
              </thead>
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
                        <StatusBadge status={e.delivery_status} />
                      </td>
                      <td>
                        <ul class="chips">
                          {destinations
                            .filter((d) => perDestination.has(d.id))
                            .map((d) => (
                              <li>
                                <span class="muted small">{hostOf(d.url)}</span> <StatusBadge status={perDestination.get(d.id)!} />
                              </li>
                            ))}
                        </ul>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
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

relayPages.get("/relay/sources/:source_id", (c) => sourcePage(c));

// The form's own address opened (a bookmark, the address bar of an older console): the source's page.
relayPages.get("/relay/sources/:source_id/destinations", (c) => c.redirect(teamPath(c, `relay/sources/${c.req.param("source_id")}`), 303));

relayPages.post("/relay/sources/:source_id/destinations", async (c) => {
  requireRole(c, "developer");
  const url = await formText(c, "url");
  const filter = await formText(c, "event_filter");
  const types = filter.split(/[\s,]+/).filter(Boolean);
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
