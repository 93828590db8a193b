/** @jsxImportSource hono/jsx */
// Environments and client keys at `flags/environments` (a reserved flag key, so no flag's page is
// shadowed): the team's environments and the create form; per environment its client keys (name,
// prefix, allowed origins, created) with create and revoke. A new key's plaintext is shown once,
// through the session's single-use flash (never in the URL); a reload shows it no more. The same
// services as /api/v1/flags/environments.
import { Hono, type Context } from "hono";
import { takeFlash, redirectWithFlash } from "../../../console/flash";
import { formText } from "../../../console/forms";
import { Time } from "../../../console/layout";
import { TableWrap, ColumnHeads } from "../../../console/pages/parts";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, type ConsoleEnv } from "../../../console/session";
import { ApiError, zodDetails, type FieldErrors } from "../../../platform/errors";
import { createClientKey, deleteClientKey, listClientKeys, type ClientKeyView } from "../flags-client-keys.service";
import { CreateEnvironmentSchema } from "../flags.schemas";
import { createEnvironment, listEnvironments } from "../flags.service";
import { canWrite, Errors, FlagTabs, lines, ReadOnly } from "./flags-parts";

export const environmentsPage = new Hono<ConsoleEnv>();

const PATH = "flags/environments";
const NOTICES = {
  "environment-created": "Environment created. Every flag is off in it until you turn it on.",
  "key-created": "Client key created.",
  "key-revoked": "Client key revoked: it answers 401 within 5 seconds everywhere.",
};

interface NewKey {
  key: string;
  name: string;
  environment: string;
}

function NewKeyBox(props: { fresh: NewKey | null; reloaded: boolean }) {
  if (props.fresh) {
    return (
      <section class="section" aria-labelledby="new-client-key-title">
        <h2 id="new-client-key-title">
          New client key of {props.fresh.environment}: {props.fresh.name}
        </h2>
        <p class="warning">
          Copy it now. It is shown only this once: we store only a hash of it. It reads the environment's client-side flags only, so it may ship in a browser or
          an app.
        </p>
        <div class="secret">
          <code id="new-client-key" data-testid="new-client-key">
            {props.fresh.key}
          </code>
          <button type="button" class="secondary small" data-copy="#new-client-key" hidden>
            Copy
          </button>
        </div>
      </section>
    );
  }
  return props.reloaded ? <p class="muted">The new key was shown once and is not shown again. If you did not copy it, revoke it and create another.</p> : null;
}

async function renderPage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors; at?: string } = {}, status: 200 | 422 = 200) {
  const teamId = c.get("consoleTeam").id;
  const fresh = await takeFlash<NewKey>(c, "key-created");
  const environments = await listEnvironments(c.env, teamId);
  const keys = await Promise.all(environments.map((e) => listClientKeys(c.env, teamId, e.key)));
  const write = canWrite(c);
  return page(
    c,
    { title: "Environments and client keys", active: "flags", status, notices: NOTICES },
    <>
      <FlagTabs c={c} current="environments" />
      <NewKeyBox fresh={fresh} reloaded={!fresh && c.req.query("notice") === "key-created"} />
      <section class="section">
        <h2>Environments</h2>
        <p class="muted small">Each flag is on or off, with its own rules, in every environment. A team has up to 10.</p>
        <TableWrap label="Environments">
          <table>
            <caption class="skip">Environments of the team</caption>
            <ColumnHeads names={["Environment", "Key", "Client keys", "Created"]} />
            <tbody>
              {environments.map((e, i) => (
                <tr data-testid="environment-row">
                  <td>{e.name}</td>
                  <td>
                    <code>{e.key}</code>
                  </td>
                  <td>{keys[i]!.length}</td>
                  <td>
                    <Time iso={e.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
        {write ? (
          <form method="post" action={teamPath(c, PATH)} class="inline-form" data-testid="create-environment">
            {extra.at === "environment" ? <Errors errors={extra.errors} /> : null}
            <div class="field narrow">
              <label for="env-key">Key</label>
              <input type="text" id="env-key" name="key" required maxlength={64} placeholder="staging" />
            </div>
            <div class="field narrow">
              <label for="env-name">Name</label>
              <input type="text" id="env-name" name="name" maxlength={200} placeholder="Staging" />
            </div>
            <button type="submit" class="secondary">
              Create environment
            </button>
          </form>
        ) : (
          <ReadOnly what="create environments and client keys" />
        )}
      </section>
      {environments.map((e, i) => (
        <ClientKeys c={c} environment={e} keys={keys[i]!} write={write} errors={extra.at === e.key ? extra.errors : undefined} />
      ))}
    </>,
  );
}

function ClientKeys(props: {
  c: Context<ConsoleEnv>;
  environment: { key: string; name: string };
  keys: ClientKeyView[];
  write: boolean;
  errors?: FieldErrors;
}) {
  const { c, environment: env } = props;
  const base = teamPath(c, `${PATH}/${env.key}/client-keys`);
  return (
    <section class="section" aria-labelledby={`keys-${env.key}`}>
      <h2 id={`keys-${env.key}`}>Client keys of {env.name}</h2>
      {props.keys.length === 0 ? (
        <p class="muted">No client keys. A client key lets a browser or a mobile app read this environment's client-side flags.</p>
      ) : (
        <TableWrap label={`Client keys of ${env.name}`}>
          <table>
            <caption class="skip">Client keys of {env.name}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Allowed origins</th>
                <th scope="col">Created</th>
                {props.write ? <th scope="col">Revoke</th> : null}
              </tr>
            </thead>
            <tbody>
              {props.keys.map((k) => (
                <tr data-testid="client-key-row">
                  <td>{k.name}</td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{k.allowed_origins.length ? k.allowed_origins.join(", ") : <span class="muted">any</span>}</td>
                  <td>
                    <Time iso={k.created_at} />
                  </td>
                  {props.write ? (
                    <td>
                      <form method="post" action={`${base}/${k.id}/revoke`} data-testid="revoke-client-key">
                        <button type="submit" class="danger small" aria-label={`Revoke ${k.name}`}>
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
      )}
      {props.write ? (
        <form method="post" action={base} class="inline-form" data-testid="create-client-key">
          <Errors errors={props.errors} />
          <div class="field narrow">
            <label for={`ck-name-${env.key}`}>Name</label>
            <input type="text" id={`ck-name-${env.key}`} name="name" maxlength={200} placeholder="Web app" />
          </div>
          <div class="field">
            <label for={`ck-origins-${env.key}`}>Allowed origins (optional, comma separated)</label>
            <input type="text" id={`ck-origins-${env.key}`} name="allowed_origins" placeholder="https://app.example.com" />
          </div>
          <button type="submit" class="secondary">
            Create client key
          </button>
        </form>
      ) : null}
    </section>
  );
}

environmentsPage.get(`/${PATH}`, (c) => renderPage(c));

environmentsPage.post(`/${PATH}`, async (c) => {
  requireRole(c, "developer");
  const name = (await formText(c, "name")).trim();
  const parsed = CreateEnvironmentSchema.safeParse({ key: (await formText(c, "key")).trim(), ...(name ? { name } : {}) });
  if (!parsed.success) return renderPage(c, { errors: zodDetails(parsed.error), at: "environment" }, 422);
  try {
    await createEnvironment(c.env, c.get("consoleTeam").id, parsed.data);
  } catch (error) {
    if (error instanceof ApiError && (error.code === "validation" || error.code === "conflict")) {
      return renderPage(c, { errors: error.details ?? { key: [error.message] }, at: "environment" }, 422);
    }
    throw error;
  }
  return redirectTo(c, PATH, "environment-created");
});

const Origin = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/;

environmentsPage.post(`/${PATH}/:environment/client-keys`, async (c) => {
  requireRole(c, "developer");
  const env = c.req.param("environment");
  const name = (await formText(c, "name")).trim();
  const origins = lines(await formText(c, "allowed_origins"));
  const errors: FieldErrors = {};
  if (name.length > 200) errors.name = ["must be at most 200 characters"];
  const bad = origins.filter((o) => !Origin.test(o) || o.length > 255);
  if (bad.length) errors.allowed_origins = [`must be origins, scheme://host[:port] with no path: ${bad.join(", ")}`];
  if (origins.length > 20) errors.allowed_origins = ["has more than 20 origins"];
  if (Object.keys(errors).length) return renderPage(c, { errors, at: env }, 422);
  try {
    const key = await createClientKey(c.env, c.get("consoleTeam").id, env, { ...(name ? { name } : {}), allowed_origins: origins });
    return redirectWithFlash(c, PATH, "key-created", { key: key.key, name: key.name, environment: env } satisfies NewKey);
  } catch (error) {
    if (error instanceof ApiError && error.code === "validation") return renderPage(c, { errors: error.details, at: env }, 422);
    throw error;
  }
});

environmentsPage.post(`/${PATH}/:environment/client-keys/:client_key_id/revoke`, async (c) => {
  requireRole(c, "developer");
  await deleteClientKey(c.env, c.get("consoleTeam").id, c.req.param("environment"), c.req.param("client_key_id"));
  return redirectTo(c, PATH, "key-revoked");
});
