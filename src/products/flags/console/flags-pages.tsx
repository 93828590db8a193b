/** @jsxImportSource hono/jsx */
// The Feature flags pages of the console, mounted by the flags definition: the team's flags at
// `flags` (one row per flag with an on/off switch per environment, a real POST form each, and the
// create form), the switch's POST (post/redirect/get, the change versioned with the console user
// as actor through the service the API's PATCH calls), then the flag page (flag-page.tsx), the
// segments (segments-page.tsx) and the environments with their client keys (environments-page.tsx).
// `segments` and `environments` are reserved flag keys, so their pages never shadow a flag's.
import { Hono, type Context } from "hono";
import { formList, formText } from "../../../console/forms";
import type { NavEntry } from "../../../console/nav";
import { TableWrap } from "../../../console/pages/parts";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, type ConsoleEnv } from "../../../console/session";
import { ApiError, zodDetails, type FieldErrors } from "../../../platform/errors";
import { CreateFlagSchema } from "../flags.schemas";
import { createFlag, getFlag, listEnvironments, listFlags, updateFlag } from "../flags.service";
import { environmentsPage } from "./environments-page";
import { flagActions } from "./flag-actions";
import { flagPage } from "./flag-page";
import { flagRuleActions } from "./flag-rule-actions";
import { canWrite, Errors, FlagTabs, lines, ReadOnly, TOGGLE_NOTICES, ToggleForm, userActor, variantValue } from "./flags-parts";
import { segmentsPage } from "./segments-page";

export const flagsPages = new Hono<ConsoleEnv>();
/** The console's nav entry of the product. */
export const FLAGS_NAV: NavEntry = { path: "flags", label: "Feature flags" };

const TYPES = ["boolean", "string", "number", "json"] as const;
/** Variant rows the create form offers for string, number and JSON flags (more over the API or on the flag's page later). */
const VARIANT_ROWS = 4;

const NOTICES = { ...TOGGLE_NOTICES, deleted: "Flag deleted, with its history, schedules and insights." };

interface Draft {
  key?: string;
  name?: string;
  type?: string;
  tags?: string;
  client_side?: boolean;
  variants?: Array<{ name: string; value: string }>;
}

function FlagState(props: { on: boolean }) {
  return <span class={`badge ${props.on ? "ok" : "gray"}`}>{props.on ? "on" : "off"}</span>;
}

function CreateFlagForm(props: { action: string; errors?: FieldErrors; draft?: Draft }) {
  const d = props.draft ?? {};
  const rows = Array.from({ length: VARIANT_ROWS }, (_, i) => d.variants?.[i] ?? { name: "", value: "" });
  return (
    <form method="post" action={props.action} class="section" data-testid="create-flag">
      <h2>Create a flag</h2>
      <Errors errors={props.errors} />
      <div class="field">
        <label for="flag-key">Key</label>
        <input
          type="text"
          id="flag-key"
          name="key"
          required
          maxlength={64}
          pattern="[a-z0-9][a-z0-9._\-]{0,63}"
          value={d.key ?? ""}
          placeholder="new-checkout"
        />
        <p class="hint muted small">What your code asks for: lowercase letters, digits, '.', '_' and '-'. It never changes.</p>
      </div>
      <div class="field">
        <label for="flag-name">Name</label>
        <input type="text" id="flag-name" name="name" maxlength={200} value={d.name ?? ""} placeholder="New checkout" />
      </div>
      <div class="field">
        <label for="flag-type">Type</label>
        <select id="flag-type" name="type">
          {TYPES.map((t) => (
            <option value={t} selected={(d.type ?? "boolean") === t}>
              {t}
            </option>
          ))}
        </select>
        <p class="hint muted small">A boolean flag has the variants on (true) and off (false). Other types take the variants below.</p>
      </div>
      <fieldset>
        <legend>Variants (string, number and JSON flags)</legend>
        {rows.map((row, i) => (
          <div class="inline-form row-actions">
            <div class="field narrow">
              <label for={`variant-name-${i}`}>Variant {i + 1} name</label>
              <input type="text" id={`variant-name-${i}`} name="variant_name" maxlength={64} value={row.name} placeholder={i === 0 ? "control" : ""} />
            </div>
            <div class="field">
              <label for={`variant-value-${i}`}>Variant {i + 1} value</label>
              <input type="text" id={`variant-value-${i}`} name="variant_value" value={row.value} placeholder={i === 0 ? '"blue", 3 or {"limit": 5}' : ""} />
            </div>
          </div>
        ))}
        <p class="hint muted small">The first variant is the off variant and what a new environment serves when turned on; change both on the flag's page.</p>
      </fieldset>
      <div class="field">
        <label for="flag-tags">Tags (optional, comma separated)</label>
        <input type="text" id="flag-tags" name="tags" value={d.tags ?? ""} placeholder="checkout, experiment" />
      </div>
      <div class="field">
        <label class="check">
          <input type="checkbox" name="client_side" value="on" checked={d.client_side} /> Served to client keys (browsers and apps)
        </label>
      </div>
      <button type="submit">Create flag</button>
    </form>
  );
}

async function listPage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors; draft?: Draft } = {}, status: 200 | 422 = 200) {
  const teamId = c.get("consoleTeam").id;
  const [flags, environments] = await Promise.all([listFlags(c.env, teamId, {}), listEnvironments(c.env, teamId)]);
  const write = canWrite(c);
  return page(
    c,
    { title: "Feature flags", active: "flags", status, notices: NOTICES },
    <>
      <FlagTabs c={c} current="flags" />
      <section class="section">
        <h2>Flags</h2>
        {flags.length === 0 ? (
          <div class="empty-state" data-testid="flags-empty">
            <p>
              No flags yet. A feature flag lets you turn a feature on or off, or roll it out to a share of your users, per environment, without deploying: your
              code asks for the flag's value and this page decides it.
            </p>
            {write ? (
              <p>First step: create a flag below (a boolean flag is enough to start), then turn it on in development.</p>
            ) : (
              <ReadOnly what="create flags" />
            )}
          </div>
        ) : (
          <TableWrap label="Flags of the team">
            <table>
              <caption class="skip">Flags of the team, with their state in each environment</caption>
              <thead>
                <tr>
                  <th scope="col">Flag</th>
                  <th scope="col">Type</th>
                  <th scope="col">Tags</th>
                  {environments.map((e) => (
                    <th scope="col">{e.name}</th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {flags.map((flag) => (
                  <tr data-testid="flag-row" data-key={flag.key}>
                    <td>
                      <a href={teamPath(c, `flags/${flag.key}`)}>{flag.name}</a>
                      <br />
                      <code class="small">{flag.key}</code>
                    </td>
                    <td>{flag.type}</td>
                    <td>{flag.tags.length ? flag.tags.join(", ") : <span class="muted">—</span>}</td>
                    {environments.map((e) => (
                      <td>
                        {write ? (
                          <ToggleForm c={c} flag={flag} environment={e.key} back="list" />
                        ) : (
                          <FlagState on={flag.environments[e.key]?.enabled ?? false} />
                        )}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </section>
      {write && flags.length === 0 ? (
        <CreateFlagForm action={teamPath(c, "flags")} errors={extra.errors} draft={extra.draft} />
      ) : write ? (
        // With flags listed, the form waits behind its summary (open again when it was refused).
        <details class="subform section" open={Boolean(extra.errors)}>
          <summary>Create a flag</summary>
          <CreateFlagForm action={teamPath(c, "flags")} errors={extra.errors} draft={extra.draft} />
        </details>
      ) : flags.length > 0 ? (
        <ReadOnly what="create flags and turn them on or off" />
      ) : null}
    </>,
  );
}

flagsPages.get("/flags", (c) => listPage(c));

flagsPages.post("/flags", async (c) => {
  requireRole(c, "developer");
  const names = await formList(c, "variant_name");
  const values = await formList(c, "variant_value");
  const draft: Draft = {
    key: (await formText(c, "key")).trim(),
    name: (await formText(c, "name")).trim(),
    type: await formText(c, "type"),
    tags: await formText(c, "tags"),
    client_side: (await formText(c, "client_side")) === "on",
    variants: names.map((name, i) => ({ name: name.trim(), value: values[i] ?? "" })),
  };
  const type = (TYPES as readonly string[]).includes(draft.type ?? "") ? (draft.type as (typeof TYPES)[number]) : "boolean";
  const errors: FieldErrors = {};
  let variants: Record<string, unknown> | undefined;
  if (type !== "boolean") {
    variants = {};
    for (const row of draft.variants ?? []) {
      if (!row.name && !row.value) continue;
      const value = variantValue(type, row.value);
      if (!row.name) (errors.variants ??= []).push(`the value ${row.value} has no variant name`);
      else if (value === undefined) (errors[`variants.${row.name}`] ??= []).push(`must be a ${type}${type === "json" ? " (JSON text)" : ""}`);
      else variants[row.name] = value;
    }
    if (Object.keys(variants).length === 0) (errors.variants ??= []).push(`a ${type} flag needs at least one variant: a name and a value`);
  }
  const parsed = CreateFlagSchema.safeParse({
    key: draft.key,
    ...(draft.name ? { name: draft.name } : {}),
    type,
    ...(variants ? { variants } : {}),
    tags: lines(draft.tags ?? ""),
    client_side: draft.client_side,
  });
  if (!parsed.success || Object.keys(errors).length > 0) {
    return listPage(c, { errors: { ...errors, ...(parsed.success ? {} : zodDetails(parsed.error)) }, draft }, 422);
  }
  try {
    const flag = await createFlag(c.env, c.get("consoleTeam").id, parsed.data, userActor(c));
    return redirectTo(c, `flags/${flag.key}`, "created");
  } catch (error) {
    if (error instanceof ApiError && error.code === "validation") return listPage(c, { errors: error.details, draft }, 422);
    if (error instanceof ApiError && error.code === "conflict") return listPage(c, { errors: { key: [error.message] }, draft }, 422);
    throw error;
  }
});

flagsPages.post("/flags/:flag_key/environments/:environment/toggle", async (c) => {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const { flag_key: key, environment } = c.req.param();
  const enabled = (await formText(c, "enabled")) === "true";
  const back = (await formText(c, "back")) === "flag" ? `flags/${key}` : "flags";
  const flag = await getFlag(c.env, teamId, key);
  if (!Object.hasOwn(flag.environments, environment)) throw ApiError.notFound("Environment not found");
  // The form names the state it wants: posting it again (a double click, a resent form) changes nothing.
  if (flag.environments[environment]!.enabled === enabled) return redirectTo(c, back, "unchanged");
  await updateFlag(c.env, teamId, key, { environments: { [environment]: { enabled } } }, null, userActor(c));
  return redirectTo(c, back, enabled ? "turned-on" : "turned-off");
});

// Static paths first: `segments` and `environments` are reserved flag keys.
flagsPages.route("/", segmentsPage);
flagsPages.route("/", environmentsPage);
flagsPages.route("/", flagPage);
flagsPages.route("/", flagActions);
flagsPages.route("/", flagRuleActions);
