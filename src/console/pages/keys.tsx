/** @jsxImportSource hono/jsx */
// The keys page: the team's keys (name, prefix, scopes, created, last used), a create form with
// the scope picker (every scope grouped by product, with presets) and the mail options, the new
// key's plaintext shown once, and revocation behind a confirmation. Same service as /api/v1/keys.
import { Hono, type Context } from "hono";
import { z } from "zod";
import { getDb } from "../../db/client";
import type { KeyRow } from "../../platform/admin/admin.service";
import { ApiError, zodDetails, type FieldErrors } from "../../platform/errors";
import { createTeamKey, listTeamKeys, revokeTeamKey } from "../../platform/keys/keys.service";
import { EXTENSION_SCOPES, keyScopes, keyScopeTuple, specScopes, type Scope } from "../../platform/scopes";
import { catalog } from "../../platform/products";
import { orNotFound } from "../../platform/tenancy";
import { settings } from "../../platform/config";
import { Time } from "../layout";
import { recordAction } from "../members.service";
import { formList, formText } from "../forms";
import { redirectWithFlash, takeFlash } from "../flash";
import { page, redirectTo, teamPath } from "../render";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../session";
import { actorOf } from "./members";
import { Errors, SecretValue, TableWrap } from "./parts";

export const keysPages = new Hono<ConsoleEnv>();

/** Scope groups as the picker shows them: each product's (its definition's label), then the platform's. */
function scopeGroups(): { label: string; scopes: readonly Scope[] }[] {
  return [
    ...catalog().products.flatMap((product) => (product.scopes ? [{ label: product.scopes.label, scopes: product.scopes.names }] : [])),
    { label: "Billing and usage", scopes: ["billing:read"] },
    { label: "API keys", scopes: EXTENSION_SCOPES },
  ];
}

/** Presets of the picker. "Full access" is every scope of the specification: managing keys is always an explicit choice. */
export function presets(): Record<string, { label: string; scopes: readonly Scope[] }> {
  return {
    full: { label: "Full access", scopes: specScopes() },
    read: { label: "Read only", scopes: keyScopes().filter((scope) => scope.endsWith(":read")) },
    sending: { label: "Sending only", scopes: ["mail:send"] },
  };
}

const createForm = () =>
  z.object({
    name: z.string().trim().min(1, "Give the key a name").max(200),
    scopes: z.array(z.enum(keyScopeTuple())).min(1, "Choose at least one scope"),
    sandbox: z.boolean(),
    allowed_streams: z.array(z.enum(["transactional", "broadcast"])).min(1, "Choose at least one mail stream"),
    allowed_recipients: z.array(z.string().email("must be an email address").max(320)).max(100),
  });

interface FormState {
  name: string;
  scopes: string[];
  sandbox: boolean;
  streams: string[];
  recipients: string;
}

const EMPTY_FORM: FormState = { name: "", scopes: [], sandbox: false, streams: ["transactional", "broadcast"], recipients: "" };

function KeyForm(props: { action: string; state: FormState; errors?: FieldErrors }) {
  const { state } = props;
  return (
    <form method="post" action={props.action} class="section" data-testid="create-key">
      <h2>Create a key</h2>
      <Errors errors={props.errors} />
      <div class="field">
        <label for="key-name">Name</label>
        <input id="key-name" type="text" name="name" required maxlength={200} value={state.name} placeholder="Production server" />
      </div>
      <p class="presets">
        <span class="muted small">Presets:</span>
        {Object.entries(presets()).map(([id, preset]) => (
          <button type="submit" name="preset" value={id} class="secondary small" formnovalidate data-scopes={preset.scopes.join(" ")}>
            {preset.label}
          </button>
        ))}
      </p>
      <div class="scope-groups">
        {scopeGroups().map((group) => (
          <fieldset>
            <legend>{group.label}</legend>
            {group.scopes.map((scope) => (
              <label class="check">
                <input type="checkbox" name="scopes" value={scope} checked={state.scopes.includes(scope)} />
                <code>{scope}</code>
              </label>
            ))}
          </fieldset>
        ))}
      </div>
      <details class="field">
        <summary>Mail options</summary>
        <fieldset>
          <legend>Sending</legend>
          <label class="check">
            <input type="checkbox" name="sandbox" value="on" checked={state.sandbox} /> Sandbox key (sends only from the sandbox domain, to its allow-list)
          </label>
          <p class="muted small">Streams this key may send on:</p>
          <div class="checks">
            {["transactional", "broadcast"].map((stream) => (
              <label class="check">
                <input type="checkbox" name="allowed_streams" value={stream} checked={state.streams.includes(stream)} /> {stream}
              </label>
            ))}
          </div>
        </fieldset>
        <div class="field">
          <label for="key-recipients">Sandbox allow-list</label>
          <textarea id="key-recipients" name="allowed_recipients" rows={3} placeholder="one address per line">
            {state.recipients}
          </textarea>
          <p class="hint">Hourly and daily caps and suspensions are set by the platform operator.</p>
        </div>
      </details>
      <button type="submit">Create key</button>
    </form>
  );
}

function KeyList(props: { keys: KeyRow[]; canRevoke: boolean; base: string }) {
  if (props.keys.length === 0) return <p class="empty">No keys yet.</p>;
  return (
    <TableWrap label="API keys of the team">
      <table>
        <caption class="skip">API keys of the team</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            {props.canRevoke ? (
              <th scope="col">
                <span class="skip">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {props.keys.map((key) => (
            <tr data-testid="key-row" data-key-id={key.id}>
              <td>
                {key.name ?? <span class="muted">unnamed</span>}
                {key.mail.sandbox ? <span class="badge warn"> sandbox</span> : null}
                {key.mail.suspended ? <span class="badge gray"> suspended</span> : null}
              </td>
              <td>
                <code>{key.prefix}…</code>
              </td>
              <td>
                <span class="scopes">
                  {key.scopes.map((scope) => (
                    <span class="badge gray">{scope}</span>
                  ))}
                </span>
              </td>
              <td>
                <Time iso={key.createdAt} />
              </td>
              <td>
                <Time iso={key.lastUsedAt} />
              </td>
              {props.canRevoke ? (
                <td>
                  <form method="post" action={`${props.base}/${key.id}/revoke`} data-testid="revoke-key">
                    <button type="submit" class="danger small" aria-label={`Revoke ${key.name ?? key.prefix}`}>
                      Revoke
                    </button>
                  </form>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

const NOTICES = {
  revoked: "The key was revoked. Requests made with it now answer 401.",
  created: "The key was created.",
};

/** The flash of a new key: its plaintext, shown once on the page the create form redirects to. */
interface NewKeyFlash {
  key: string;
  name: string | null;
}

async function keysPage(c: Context<ConsoleEnv>, extra: { state?: FormState; errors?: FieldErrors }, status: 200 | 422 = 200) {
  const [keys, created] = await Promise.all([listTeamKeys(getDb(c.env.DB), c.get("consoleTeam").id), takeFlash<NewKeyFlash>(c, "created")]);
  const canWrite = roleAtLeast(c.get("consoleTeam").role, "developer");
  return page(
    c,
    { title: "API keys", active: "keys", status, notices: NOTICES },
    <>
      {created ? (
        <section class="section" aria-labelledby="new-key-title">
          <h2 id="new-key-title">Your new key{created.name ? `: ${created.name}` : ""}</h2>
          <p class="warning">Copy it now. It is shown only this once: we store only a hash of it.</p>
          <SecretValue id="new-key" value={created.key} />
        </section>
      ) : c.req.query("notice") === "created" ? (
        <p class="muted">The new key was shown once and is not shown again. If you did not copy it, revoke it and create another.</p>
      ) : null}
      <section class="section">
        <h2>Keys</h2>
        <KeyList keys={keys} canRevoke={canWrite} base={teamPath(c, "keys")} />
      </section>
      {canWrite ? (
        <KeyForm action={teamPath(c, "keys")} state={extra.state ?? EMPTY_FORM} errors={extra.errors} />
      ) : (
        <p class="muted">Viewers can read the keys list; a developer, admin or owner creates and revokes keys.</p>
      )}
    </>,
  );
}

keysPages.get("/keys", (c) => keysPage(c, {}));

keysPages.post("/keys", async (c) => {
  requireRole(c, "developer");
  const state: FormState = {
    name: await formText(c, "name"),
    scopes: await formList(c, "scopes"),
    sandbox: (await formText(c, "sandbox")) === "on",
    streams: await formList(c, "allowed_streams"),
    recipients: await formText(c, "allowed_recipients"),
  };
  // A preset button without JavaScript: the form again with the preset's scopes ticked.
  const preset = await formText(c, "preset");
  const choices = presets();
  if (preset && Object.hasOwn(choices, preset)) return keysPage(c, { state: { ...state, scopes: [...choices[preset].scopes] } });
  const recipients = state.recipients.split(/[\s,]+/).filter(Boolean);
  const parsed = createForm().safeParse({
    name: state.name,
    scopes: state.scopes,
    sandbox: state.sandbox,
    allowed_streams: state.streams,
    allowed_recipients: recipients,
  });
  if (!parsed.success) return keysPage(c, { state, errors: zodDetails(parsed.error) }, 422);
  const input = parsed.data;
  const db = getDb(c.env.DB);
  const { row, key } = await createTeamKey(
    db,
    c.get("consoleTeam").id,
    { kind: "member" },
    {
      name: input.name,
      scopes: input.scopes,
      mail: { sandbox: input.sandbox, allowed_streams: input.allowed_streams, allowed_recipients: input.allowed_recipients },
    },
    settings(c.env).sandboxCaps,
  );
  await recordAction(db, c.get("consoleTeam").id, actorOf(c), "key_created", `${row.name} (${row.prefix}…)`);
  return redirectWithFlash(c, "keys", "created", { key, name: row.name } satisfies NewKeyFlash);
});

keysPages.post("/keys/:key_id/revoke", async (c) => {
  requireRole(c, "developer");
  const db = getDb(c.env.DB);
  const teamId = c.get("consoleTeam").id;
  const keyId = c.req.param("key_id");
  if ((await formText(c, "confirm")) !== "yes") {
    const key = orNotFound(
      (await listTeamKeys(db, teamId)).find((k) => k.id === keyId),
      () => ApiError.notFound("Key not found"),
    );
    return page(
      c,
      { title: "Revoke this key?", active: "keys" },
      <form method="post" class="section">
        <p>
          Revoke <strong>{key.name ?? "the unnamed key"}</strong> (<code>{key.prefix}…</code>)? Every request made with it answers 401 from now on. This cannot
          be undone.
        </p>
        <input type="hidden" name="confirm" value="yes" />
        <p class="presets">
          <button type="submit" class="danger solid" data-testid="confirm-revoke">
            Revoke key
          </button>
          <a class="button secondary" href={teamPath(c, "keys")}>
            Cancel
          </a>
        </p>
      </form>,
    );
  }
  const row = await revokeTeamKey(db, teamId, keyId);
  await recordAction(db, teamId, actorOf(c), "key_revoked", `${row.name} (${row.prefix}…)`);
  return redirectTo(c, "keys", "revoked");
});
