/** @jsxImportSource hono/jsx */
// A flag's variants on its page: the table (name, value, the off variant), the form editing them
// (values, names, new variants, removals; posted to flag-actions.tsx as one PATCH of `variants`)
// and the form choosing the off variant. A variant a rule, a default rule or the off variant still
// serves cannot be removed or renamed: the API refuses it (422) and the form says so with the
// API's own message, the typed rows kept.
import type { Context } from "hono";
import { TableWrap, ColumnHeads } from "../../../console/pages/parts";
import { teamPath } from "../../../console/render";
import type { ConsoleEnv } from "../../../console/session";
import type { Flag } from "../flag-model";
import { keptFor, ProblemNote, VersionField, type Problem } from "./flag-form-parts";
import { canWrite, ReadOnly, variantText } from "./flags-parts";

/** Empty rows the edit form offers for new variants. */
const NEW_ROWS = 2;

const VALUE_HINTS = {
  boolean: "true or false",
  string: "text, as it is served",
  number: "a number",
  json: 'JSON: "text", 3, true or {"limit": 5}',
} as const;

function VariantsForm(props: { c: Context<ConsoleEnv>; flag: Flag; problem?: Problem | null }) {
  const { flag } = props;
  const kept = keptFor(props.problem, "variants");
  const rows = kept
    ? (kept.variant_name ?? []).map((name, i) => ({ original: kept.variant_original?.[i] ?? "", name, value: kept.variant_value?.[i] ?? "" }))
    : [
        ...Object.entries(flag.variants).map(([name, value]) => ({ original: name, name, value: variantText(flag.type, value) })),
        ...Array.from({ length: NEW_ROWS }, () => ({ original: "", name: "", value: "" })),
      ];
  const removed = new Set(kept?.remove ?? []);
  let added = 0;
  return (
    <form method="post" action={teamPath(props.c, `flags/${flag.key}/variants`)} data-testid="edit-variants">
      <ProblemNote problem={props.problem} at="variants" />
      <VersionField flag={flag} />
      {rows.map((row, i) => {
        const title = row.original ? `Variant ${row.original}` : `New variant ${++added}`;
        return (
          <div class="inline-form row-actions" data-testid="variant-edit-row">
            <input type="hidden" name="variant_original" value={row.original} />
            <div class="field narrow">
              <label for={`variant-edit-name-${i}`}>{title}: name</label>
              <input type="text" id={`variant-edit-name-${i}`} name="variant_name" maxlength={64} value={row.name} />
            </div>
            <div class="field">
              <label for={`variant-edit-value-${i}`}>{title}: value</label>
              <input type="text" id={`variant-edit-value-${i}`} name="variant_value" value={row.value} placeholder={VALUE_HINTS[flag.type]} />
            </div>
            {row.original ? (
              <div class="field narrow">
                <label class="check">
                  <input type="checkbox" name="remove" value={row.original} checked={removed.has(row.original)} /> Remove {row.original}
                </label>
              </div>
            ) : null}
          </div>
        );
      })}
      <p class="hint muted small">
        Values are {VALUE_HINTS[flag.type]}. A variant that a rule, a default rule or the off variant serves can be neither removed nor renamed: point them at
        another variant first.{flag.type === "boolean" ? " A boolean flag has at most two variants." : ""}
      </p>
      <button type="submit" class="secondary">
        Save variants
      </button>
    </form>
  );
}

export function VariantsSection(props: { c: Context<ConsoleEnv>; flag: Flag; problem?: Problem | null }) {
  const { c, flag } = props;
  return (
    <section class="section" aria-labelledby="variants-title">
      <h2 id="variants-title">Variants</h2>
      <TableWrap label="Variants">
        <table>
          <caption class="skip">The flag's variants and their values</caption>
          <ColumnHeads names={["Variant", "Value", "Role"]} />
          <tbody>
            {Object.entries(flag.variants).map(([name, value]) => (
              <tr data-testid="variant-row">
                <td>
                  <strong>{name}</strong>
                </td>
                <td>
                  <code class="small wrap">{JSON.stringify(value)}</code>
                </td>
                <td>{name === flag.off_variant ? <span class="badge gray">served when off</span> : null}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {canWrite(c) ? (
        <>
          <details class="subform" open={props.problem?.at === "variants"}>
            <summary>Edit variants</summary>
            <VariantsForm c={c} flag={flag} problem={props.problem} />
          </details>
          <form method="post" action={teamPath(c, `flags/${flag.key}/off-variant`)} class="inline-form" data-testid="off-variant">
            <ProblemNote problem={props.problem} at="off-variant" />
            <VersionField flag={flag} />
            <div class="field">
              <label for="off-variant">Served when an environment is off</label>
              <select id="off-variant" name="off_variant">
                {Object.keys(flag.variants).map((v) => (
                  <option value={v} selected={v === flag.off_variant}>
                    {v}
                  </option>
                ))}
              </select>
            </div>
            <button type="submit" class="secondary">
              Save
            </button>
          </form>
        </>
      ) : (
        <ReadOnly what="change the variants" />
      )}
    </section>
  );
}
