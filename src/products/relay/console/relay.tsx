/** @jsxImportSource hono/jsx */
// The Webhook relay pages: the team's sources at `relay` (create one), a source at
// `relay/sources/:source_id` (relay-source.tsx: its ingest address, destinations, events), its
// settings and the edit and deletion of a source or a destination (relay-settings.tsx), and an
// event (relay-event.tsx: attempts, payload, replay). Every read and write goes through the
// services of /api/v1/webhooks, under the same tenancy, caps and quota.
import { Hono, type Context } from "hono";
import { zodDetails, type FieldErrors } from "../../../platform/errors";
import { createSource, listSources } from "../relay-sources.service";
import { CreateSourceBody, PROVIDERS } from "../relay.schemas";
import { Time } from "../../../console/layout";
import { formText } from "../../../console/forms";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { Errors, ColumnHeads, TableWrap } from "../../../console/pages/parts";
import { relayEventPages } from "./relay-event";
import { PROVIDER_LABELS } from "./relay-parts";
import { relaySettingsPages } from "./relay-settings";
import { relaySourcePages } from "./relay-source";

export const relayPages = new Hono<ConsoleEnv>();
relayPages.route("/", relaySourcePages);
relayPages.route("/", relaySettingsPages);
relayPages.route("/", relayEventPages);

const SOURCES_NOTICES = { deleted: "The source was deleted with its destinations and events; its address no longer answers." };

// ---------------------------------------------------------------------------------------------
// Sources

async function sourcesPage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors; name?: string } = {}, status: 200 | 422 = 200) {
  const team = c.get("consoleTeam");
  const sources = await listSources(c.env, team.id);
  const canWrite = roleAtLeast(team.role, "developer");
  const base = teamPath(c, "relay/sources");
  return page(
    c,
    { title: "Webhook relay", active: "relay", status, notices: SOURCES_NOTICES },
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
          <TableWrap label="Webhook sources of the team">
            <table>
              <caption class="skip">Webhook sources of the team</caption>
              <ColumnHeads names={["Name", "Sender", "Destinations", "Signatures", "State", "Created"]} />
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
          </TableWrap>
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
