/** @jsxImportSource hono/jsx */
// A relay source's settings at `relay/sources/:source_id/settings` (name, receiving or paused,
// retention, signing secret replaced or removed), its deletion after typing its name, and a
// destination's edit form at `relay/sources/:source_id/destinations/:destination_id` (URL, filter,
// on or off) with its deletion, confirmed. Each write calls the service of the API operation
// (updateWebhookSource, deleteWebhookSource, updateWebhookDestination, deleteWebhookDestination)
// and redirects (post/redirect/get); a refused form answers again at 422 and changes nothing.
import { Hono, type Context } from "hono";
import { ApiError, zodDetails, type FieldErrors } from "../../../platform/errors";
import { deleteDestination, listDestinations, patchDestination } from "../relay-destinations.service";
import { deleteSource, getSource, patchSource } from "../relay-sources.service";
import { PatchDestinationBody, PatchSourceBody, RETENTION_MAX_DAYS } from "../relay.schemas";
import { formText } from "../../../console/forms";
import { ConfirmForm, DeleteSection, Errors, refused } from "../../../console/pages/parts";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, type ConsoleEnv } from "../../../console/session";
import { filterTypes, Health, PROVIDER_LABELS } from "./relay-parts";

export const relaySettingsPages = new Hono<ConsoleEnv>();

const SOURCE = "/relay/sources/:source_id";
const DESTINATION = "/relay/sources/:source_id/destinations/:destination_id";

// ---------------------------------------------------------------------------------------------
// A source's settings

type SourceForm = { name: string; enabled: boolean; retention: string };

async function settingsPage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors; form?: SourceForm } = {}) {
  const sourceId = c.req.param("source_id") ?? "";
  const source = await getSource(c.env, c.get("consoleTeam").id, sourceId);
  const form = extra.form ?? { name: source.name, enabled: source.enabled, retention: String(source.retention_days) };
  const base = teamPath(c, `relay/sources/${sourceId}`);
  return page(
    c,
    { title: `${source.name}: settings`, active: "relay", status: extra.errors ? 422 : 200 },
    <>
      <p class="breadcrumbs small">
        <a href={teamPath(c, "relay")}>Webhook relay</a> / <a href={base}>{source.name}</a> / settings
      </p>
      <form method="post" action={`${base}/settings`} class="section" data-testid="source-settings-form">
        <h2>Settings</h2>
        <Errors errors={extra.errors} />
        <p class="muted small">Sender: {PROVIDER_LABELS[source.provider]} (fixed when the source was made).</p>
        <div class="inline-form">
          <div class="field">
            <label for="source-name">Name</label>
            <input id="source-name" type="text" name="name" required maxlength={200} value={form.name} />
          </div>
          <div class="field narrow">
            <label for="source-retention">Keep events (days)</label>
            <input id="source-retention" type="number" name="retention_days" required min={1} max={RETENTION_MAX_DAYS} value={form.retention} />
          </div>
        </div>
        <label class="check">
          <input type="checkbox" name="enabled" value="on" checked={form.enabled} /> Receiving (a paused source answers 410 to its sender)
        </label>
        <fieldset>
          <legend>Signing secret</legend>
          <p class="muted small">
            {source.signature_verification ? "Signatures are verified with a stored secret (never shown)." : "No secret: signatures are not checked."}
          </p>
          <div class="field">
            <label for="source-secret">A new secret (leave empty to keep {source.signature_verification ? "the current one" : "none"})</label>
            <input id="source-secret" type="password" name="signing_secret" autocomplete="off" maxlength={512} />
          </div>
          {source.signature_verification ? (
            <label class="check">
              <input type="checkbox" name="remove_secret" value="on" /> Remove the secret and stop checking signatures
            </label>
          ) : null}
        </fieldset>
        <p>
          <button type="submit">Save settings</button>
        </p>
      </form>
      <DeleteSection
        what="source"
        consequence="Its address stops answering; its destinations, events and attempts are deleted."
        href={`${base}/delete`}
        testid="delete-source"
      />
    </>,
  );
}

relaySettingsPages.get(`${SOURCE}/settings`, (c) => {
  requireRole(c, "developer");
  return settingsPage(c);
});

relaySettingsPages.post(`${SOURCE}/settings`, async (c) => {
  requireRole(c, "developer");
  const sourceId = c.req.param("source_id");
  const form: SourceForm = {
    name: await formText(c, "name"),
    enabled: (await formText(c, "enabled")) === "on",
    retention: await formText(c, "retention_days"),
  };
  const secret = await formText(c, "signing_secret");
  const remove = (await formText(c, "remove_secret")) === "on";
  const parsed = PatchSourceBody.safeParse({
    name: form.name,
    enabled: form.enabled,
    retention_days: form.retention === "" ? Number.NaN : Number(form.retention),
    ...(secret ? { signing_secret: secret } : remove ? { signing_secret: null } : {}),
  });
  if (!parsed.success) return settingsPage(c, { errors: zodDetails(parsed.error), form });
  await patchSource(c.env, c.get("consoleTeam").id, sourceId, parsed.data);
  return redirectTo(c, `relay/sources/${sourceId}`, "saved");
});

async function deleteSourcePage(c: Context<ConsoleEnv>, error?: string) {
  const sourceId = c.req.param("source_id") ?? "";
  const source = await getSource(c.env, c.get("consoleTeam").id, sourceId);
  return page(
    c,
    { title: `Delete ${source.name}?`, active: "relay", status: error ? 422 : 200 },
    <ConfirmForm
      action={teamPath(c, `relay/sources/${sourceId}/delete`)}
      question={
        <>
          Delete the source <strong>{source.name}</strong>? Its address stops answering at once, and its events, destinations and attempts are deleted. This
          cannot be undone.
        </>
      }
      typeName={source.name}
      error={error}
      button="Delete source"
      cancel={teamPath(c, `relay/sources/${sourceId}/settings`)}
      testid="confirm-delete-source"
    />,
  );
}

relaySettingsPages.get(`${SOURCE}/delete`, (c) => {
  requireRole(c, "developer");
  return deleteSourcePage(c);
});

relaySettingsPages.post(`${SOURCE}/delete`, async (c) => {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const sourceId = c.req.param("source_id");
  const source = await getSource(c.env, teamId, sourceId);
  if ((await formText(c, "confirm_name")).trim() !== source.name) return deleteSourcePage(c, "confirm name: type the name of the source exactly to delete it");
  await deleteSource(c.env, teamId, sourceId);
  return redirectTo(c, "relay", "deleted");
});

// ---------------------------------------------------------------------------------------------
// A destination: edit and delete

type DestinationForm = { url: string; filter: string; enabled: boolean };

/** The destination of the path, under the source of the path and the team (404 otherwise). */
async function pathDestination(c: Context<ConsoleEnv>) {
  const teamId = c.get("consoleTeam").id;
  const sourceId = c.req.param("source_id") ?? "";
  const [source, destinations] = await Promise.all([getSource(c.env, teamId, sourceId), listDestinations(c.env, teamId, sourceId)]);
  const destination = destinations.find((d) => d.id === c.req.param("destination_id"));
  if (!destination) throw new ApiError("not_found", "Destination not found");
  return { source, destination };
}

async function destinationPage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors; form?: DestinationForm } = {}) {
  const { source, destination: d } = await pathDestination(c);
  const form = extra.form ?? { url: d.url, filter: d.event_filter.join(", "), enabled: d.enabled };
  const base = teamPath(c, `relay/sources/${source.id}`);
  const action = `${base}/destinations/${d.id}`;
  return page(
    c,
    { title: "Destination", active: "relay", status: extra.errors ? 422 : 200 },
    <>
      <p class="breadcrumbs small">
        <a href={teamPath(c, "relay")}>Webhook relay</a> / <a href={base}>{source.name}</a> / destination
      </p>
      <form method="post" action={action} class="section" data-testid="edit-destination">
        <h2>
          Destination <Health d={d} />
        </h2>
        <Errors errors={extra.errors} />
        <div class="inline-form">
          <div class="field grow">
            <label for="destination-url">URL</label>
            <input id="destination-url" type="url" name="url" required maxlength={2048} value={form.url} />
          </div>
          <div class="field">
            <label for="destination-filter">Only these event types (empty: all)</label>
            <input id="destination-filter" type="text" name="event_filter" value={form.filter} placeholder="invoice.paid, customer.*" />
          </div>
        </div>
        <label class="check">
          <input type="checkbox" name="enabled" value="on" checked={form.enabled} /> On (switching it on again starts its health afresh)
        </label>
        <p class="hint muted small">The signing secret stays the same; it was shown once when the destination was added.</p>
        <p>
          <button type="submit">Save destination</button>
        </p>
      </form>
      <form method="post" action={`${action}/delete`} class="section" data-testid="delete-destination">
        <h2>Delete the destination</h2>
        <p class="muted small">Nothing more is sent to it; its pending deliveries and their attempts are deleted.</p>
        <button type="submit" class="danger small">
          Delete destination…
        </button>
      </form>
    </>,
  );
}

relaySettingsPages.get(DESTINATION, (c) => {
  requireRole(c, "developer");
  return destinationPage(c);
});

relaySettingsPages.post(DESTINATION, async (c) => {
  requireRole(c, "developer");
  const sourceId = c.req.param("source_id");
  const form: DestinationForm = { url: await formText(c, "url"), filter: await formText(c, "event_filter"), enabled: (await formText(c, "enabled")) === "on" };
  const parsed = PatchDestinationBody.safeParse({ url: form.url, event_filter: filterTypes(form.filter), enabled: form.enabled });
  if (!parsed.success) return destinationPage(c, { errors: zodDetails(parsed.error), form });
  const errors = await refused(() => patchDestination(c.env, c.get("consoleTeam").id, sourceId, c.req.param("destination_id"), parsed.data));
  if (errors) return destinationPage(c, { errors, form });
  return redirectTo(c, `relay/sources/${sourceId}`, "destination-saved");
});

relaySettingsPages.post(`${DESTINATION}/delete`, async (c) => {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const sourceId = c.req.param("source_id");
  if ((await formText(c, "confirm")) !== "yes") {
    const { source, destination } = await pathDestination(c);
    return page(
      c,
      { title: "Delete the destination?", active: "relay" },
      <ConfirmForm
        action={teamPath(c, `relay/sources/${sourceId}/destinations/${destination.id}/delete`)}
        question={
          <>
            Delete the destination <code class="wrap">{destination.url}</code> of <strong>{source.name}</strong>? Nothing more is sent to it.
          </>
        }
        button="Delete destination"
        cancel={teamPath(c, `relay/sources/${sourceId}/destinations/${destination.id}`)}
        testid="confirm-delete-destination"
      />,
    );
  }
  await deleteDestination(c.env, teamId, sourceId, c.req.param("destination_id"));
  return redirectTo(c, `relay/sources/${sourceId}`, "destination-deleted");
});
