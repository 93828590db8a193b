/** @jsxImportSource hono/jsx */
// Segments at `flags/segments`: the list (who is in, the rules in words, the flags that use each)
// and the create form; a segment's page `flags/segments/:segment_key` edits its name and context
// keys, adds and removes rules, and deletes it; deleting a segment a flag uses is refused (409)
// with those flags named and linked. The same services as /api/v1/flags/segments.
import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { formText } from "../../../console/forms";
import { TableWrap, ColumnHeads } from "../../../console/pages/parts";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, type ConsoleEnv } from "../../../console/session";
import { ApiError, zodDetails, type FieldErrors } from "../../../platform/errors";
import { type Segment, segmentsUsed } from "../flag-model";
import { ClauseSchema, CreateSegmentSchema, UpdateSegmentSchema } from "../flags.schemas";
import { createSegment, deleteSegment, getSegment, listFlags, listSegments, updateSegment } from "../flags.service";
import { clauseText, OP_CHOICES } from "./flag-words";
import { canWrite, Errors, FlagTabs, lines, ReadOnly } from "./flags-parts";

export const segmentsPage = new Hono<ConsoleEnv>();

const NOTICES = { created: "Segment created.", saved: "Segment saved.", deleted: "Segment deleted." };

const segmentRuleText = (rule: Segment["rules"][number]) => `If ${rule.clauses.map(clauseText).join(" and ")}`;

/** Flag keys by the segment they name. */
async function usersOf(c: Context<ConsoleEnv>): Promise<Map<string, string[]>> {
  const users = new Map<string, string[]>();
  for (const flag of await listFlags(c.env, c.get("consoleTeam").id, {})) {
    for (const segment of segmentsUsed(flag)) users.set(segment, [...(users.get(segment) ?? []), flag.key]);
  }
  return users;
}

function FlagLinks(props: { c: Context<ConsoleEnv>; keys: string[] }) {
  if (props.keys.length === 0) return <span class="muted">no flag</span>;
  return (
    <>
      {props.keys.map((key, i) => (
        <>
          {i > 0 ? ", " : ""}
          <a href={teamPath(props.c, `flags/${key}`)}>{key}</a>
        </>
      ))}
    </>
  );
}

interface Draft {
  key?: string;
  name?: string;
  included?: string;
  excluded?: string;
}

function KeyLists(props: { draft: Draft; id: string }) {
  return (
    <>
      <div class="field">
        <label for={`${props.id}-included`}>Included context keys (one a line)</label>
        <textarea id={`${props.id}-included`} name="included" rows={3}>
          {props.draft.included ?? ""}
        </textarea>
      </div>
      <div class="field">
        <label for={`${props.id}-excluded`}>Excluded context keys (one a line; excluded wins)</label>
        <textarea id={`${props.id}-excluded`} name="excluded" rows={2}>
          {props.draft.excluded ?? ""}
        </textarea>
      </div>
    </>
  );
}

async function listPage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors; draft?: Draft } = {}, status: 200 | 422 = 200) {
  const [segments, users] = await Promise.all([listSegments(c.env, c.get("consoleTeam").id), usersOf(c)]);
  const write = canWrite(c);
  const d = extra.draft ?? {};
  return page(
    c,
    { title: "Segments", active: "flags", status, notices: NOTICES },
    <>
      <FlagTabs c={c} current="segments" />
      <section class="section">
        <h2>Segments</h2>
        {segments.length === 0 ? (
          <p class="empty-state" data-testid="segments-empty">
            No segments yet. A segment is a named group of users (listed by key, or matched by rules) that any flag's rule can target: "Users in segment beta →
            on".
          </p>
        ) : (
          <TableWrap label="Segments">
            <table>
              <caption class="skip">Segments of the team</caption>
              <ColumnHeads names={["Segment", "Included", "Excluded", "Rules", "Used by"]} />
              <tbody>
                {segments.map((s) => (
                  <tr data-testid="segment-row" data-key={s.key}>
                    <td>
                      <a href={teamPath(c, `flags/segments/${s.key}`)}>{s.name}</a>
                      <br />
                      <code class="small">{s.key}</code>
                    </td>
                    <td>{s.included.length}</td>
                    <td>{s.excluded.length}</td>
                    <td>{s.rules.length ? s.rules.map(segmentRuleText).join("; ") : <span class="muted">—</span>}</td>
                    <td>
                      <FlagLinks c={c} keys={users.get(s.key) ?? []} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </section>
      {write ? (
        <form method="post" action={teamPath(c, "flags/segments")} class="section" data-testid="create-segment">
          <h2>Create a segment</h2>
          <Errors errors={extra.errors} />
          <div class="field">
            <label for="segment-key">Key</label>
            <input type="text" id="segment-key" name="key" required maxlength={64} value={d.key ?? ""} placeholder="beta-testers" />
          </div>
          <div class="field">
            <label for="segment-name">Name</label>
            <input type="text" id="segment-name" name="name" maxlength={200} value={d.name ?? ""} placeholder="Beta testers" />
          </div>
          <KeyLists draft={d} id="segment-new" />
          <button type="submit">Create segment</button>
        </form>
      ) : (
        <ReadOnly what="create segments" />
      )}
    </>,
  );
}

segmentsPage.get("/flags/segments", (c) => listPage(c));

segmentsPage.post("/flags/segments", async (c) => {
  requireRole(c, "developer");
  const draft: Draft = {
    key: (await formText(c, "key")).trim(),
    name: (await formText(c, "name")).trim(),
    included: await formText(c, "included"),
    excluded: await formText(c, "excluded"),
  };
  const parsed = CreateSegmentSchema.safeParse({
    key: draft.key,
    ...(draft.name ? { name: draft.name } : {}),
    included: lines(draft.included ?? ""),
    excluded: lines(draft.excluded ?? ""),
  });
  if (!parsed.success) return listPage(c, { errors: zodDetails(parsed.error), draft }, 422);
  try {
    const segment = await createSegment(c.env, c.get("consoleTeam").id, parsed.data);
    return redirectTo(c, `flags/segments/${segment.key}`, "created");
  } catch (error) {
    if (error instanceof ApiError && (error.code === "validation" || error.code === "conflict")) {
      return listPage(c, { errors: error.details ?? { key: [error.message] }, draft }, 422);
    }
    throw error;
  }
});

async function segmentPage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors; status?: ContentfulStatusCode } = {}) {
  const key = c.req.param("segment_key")!;
  const [segment, users] = await Promise.all([getSegment(c.env, c.get("consoleTeam").id, key), usersOf(c)]);
  const write = canWrite(c);
  const base = teamPath(c, `flags/segments/${segment.key}`);
  return page(
    c,
    { title: segment.name, active: "flags", status: extra.status, notices: NOTICES },
    <>
      <p class="breadcrumbs small">
        <a href={teamPath(c, "flags/segments")}>Segments</a> / {segment.key}
      </p>
      <Errors errors={extra.errors} />
      <section class="section">
        <h2>Who is in it</h2>
        <p>
          {segment.included.length} included and {segment.excluded.length} excluded context keys. Used by{" "}
          <FlagLinks c={c} keys={users.get(segment.key) ?? []} />.
        </p>
        <ol class="rules" data-testid="segment-rules">
          {segment.rules.map((rule) => (
            <li>
              <span>{segmentRuleText(rule)}</span>
              {write ? (
                <form method="post" action={`${base}/rules/${encodeURIComponent(rule.id ?? "")}/remove`} class="inline-form">
                  <button type="submit" class="link-button small" aria-label={`Remove the rule: ${segmentRuleText(rule)}`}>
                    Remove
                  </button>
                </form>
              ) : null}
            </li>
          ))}
        </ol>
        {segment.rules.length === 0 ? <p class="muted small">No rules: only the included keys are in the segment.</p> : null}
      </section>
      {write ? (
        <>
          <form method="post" action={`${base}/rules`} class="section" data-testid="add-segment-rule">
            <h2>Add a rule</h2>
            <div class="inline-form">
              <div class="field narrow">
                <label for="rule-attribute">Attribute</label>
                <input type="text" id="rule-attribute" name="attribute" size={10} maxlength={256} placeholder="email" />
              </div>
              <div class="field narrow">
                <label for="rule-op">Operator</label>
                <select id="rule-op" name="op">
                  {OP_CHOICES.filter(([op]) => op !== "in_segment").map(([op, words]) => (
                    <option value={op}>{words}</option>
                  ))}
                </select>
              </div>
              <div class="field">
                <label for="rule-values">Values (comma separated)</label>
                <input type="text" id="rule-values" name="values" placeholder="@example.com" />
              </div>
            </div>
            <button type="submit" class="secondary">
              Add rule
            </button>
          </form>
          <form method="post" action={base} class="section" data-testid="edit-segment">
            <h2>Edit</h2>
            <div class="field">
              <label for="segment-name">Name</label>
              <input type="text" id="segment-name" name="name" required maxlength={200} value={segment.name} />
            </div>
            <KeyLists draft={{ included: segment.included.join("\n"), excluded: segment.excluded.join("\n") }} id="segment-edit" />
            <button type="submit">Save segment</button>
          </form>
          <form method="post" action={`${base}/delete`} class="section" data-testid="delete-segment">
            <h2>Delete</h2>
            <p class="muted small">A segment a flag's rule names cannot be deleted: remove it from those rules first.</p>
            <button type="submit" class="danger">
              Delete segment
            </button>
          </form>
        </>
      ) : (
        <ReadOnly what="edit segments" />
      )}
    </>,
  );
}

segmentsPage.get("/flags/segments/:segment_key", (c) => segmentPage(c));

/** A segment write: a refusal re-renders the segment's page at its status with the problem, a success redirects. */
async function segmentWrite(c: Context<ConsoleEnv>, work: (teamId: string, segment: Segment) => Promise<FieldErrors | undefined>, notice = "saved") {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const segment = await getSegment(c.env, teamId, c.req.param("segment_key")!);
  try {
    const errors = await work(teamId, segment);
    if (errors) return segmentPage(c, { errors, status: 422 });
  } catch (error) {
    if (error instanceof ApiError && error.code === "validation") return segmentPage(c, { errors: error.details, status: 422 });
    if (error instanceof ApiError && error.code === "conflict") {
      const flags = error.message.split(": ")[1] ?? "";
      return segmentPage(c, {
        errors: { form: [`Not deleted: flags use this segment in their rules (${flags}). Remove it from those rules first.`] },
        status: 409,
      });
    }
    throw error;
  }
  return notice === "deleted" ? redirectTo(c, "flags/segments", "deleted") : redirectTo(c, `flags/segments/${segment.key}`, notice);
}

segmentsPage.post("/flags/segments/:segment_key", (c) =>
  segmentWrite(c, async (teamId, segment) => {
    const parsed = UpdateSegmentSchema.safeParse({
      name: (await formText(c, "name")).trim(),
      included: lines(await formText(c, "included")),
      excluded: lines(await formText(c, "excluded")),
    });
    if (!parsed.success) return zodDetails(parsed.error);
    await updateSegment(c.env, teamId, segment.key, parsed.data);
    return undefined;
  }),
);

segmentsPage.post("/flags/segments/:segment_key/rules", (c) =>
  segmentWrite(c, async (teamId, segment) => {
    const clause = ClauseSchema.safeParse({
      attribute: (await formText(c, "attribute")).trim(),
      op: await formText(c, "op"),
      values: lines(await formText(c, "values")),
    });
    if (!clause.success) return zodDetails(clause.error);
    await updateSegment(c.env, teamId, segment.key, { rules: [...segment.rules, { clauses: [clause.data] }] });
    return undefined;
  }),
);

segmentsPage.post("/flags/segments/:segment_key/rules/:rule_id/remove", (c) =>
  segmentWrite(c, async (teamId, segment) => {
    if (!segment.rules.some((r) => r.id === c.req.param("rule_id"))) throw ApiError.notFound("Rule not found");
    await updateSegment(c.env, teamId, segment.key, { rules: segment.rules.filter((r) => r.id !== c.req.param("rule_id")) });
    return undefined;
  }),
);

segmentsPage.post("/flags/segments/:segment_key/delete", (c) =>
  segmentWrite(
    c,
    async (teamId, segment) => {
      await deleteSegment(c.env, teamId, segment.key);
      return undefined;
    },
    "deleted",
  ),
);
