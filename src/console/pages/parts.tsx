/** @jsxImportSource hono/jsx */
// Small pieces the console's pages share: a snippet with its copy button, a value shown once, a
// form's field errors, a status badge, a confirmation step, numbered paging (`?page=`) for lists
// that page by number, a table's scroll box, and the team as the quota sees it.
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { HtmlEscapedString } from "hono/utils/html";
import { getDb } from "../../db/client";
import { getTeam } from "../../platform/admin/admin.service";
import { ApiError, type FieldErrors } from "../../platform/errors";
import type { QuotaOwner } from "../../platform/quota";
import type { ConsoleEnv } from "../session";

/** A block of text to copy (a link, a snippet, a curl command); the button appears with JavaScript. */
export function CopyBlock(props: { id: string; text: string; label?: string }) {
  return (
    <div class="snippet">
      <pre id={props.id}>{props.text}</pre>
      <button type="button" class="secondary small" data-copy={`#${props.id}`} hidden>
        {props.label ?? "Copy"}
      </button>
    </div>
  );
}

/** A value to copy on one line (a key, a token, a secret, an address) with its copy button. */
export function SecretValue(props: { id: string; value: string; testid?: string }) {
  return (
    <div class="secret">
      <code id={props.id} data-testid={props.testid ?? props.id}>
        {props.value}
      </code>
      <button type="button" class="secondary small" data-copy={`#${props.id}`} hidden>
        Copy
      </button>
    </div>
  );
}

/** What is wrong with a refused form, field by field (the API's validation details). */
export function Errors(props: { errors?: FieldErrors | null }) {
  if (!props.errors) return null;
  return (
    <ul class="errors">
      {Object.entries(props.errors).map(([field, messages]) => (
        <li>
          {field.replace(/_/g, " ")}: {messages.join(", ")}
        </li>
      ))}
    </ul>
  );
}

/**
 * What a service refused in a form's values (its validation: an address the SSRF guard refuses, a
 * cap, a taken name) as field errors, for the form to answer again at 422; any other error is
 * thrown on. `const errors = await refused(() => service(...))` is null when the service did it.
 */
export async function refused(work: () => Promise<unknown>): Promise<FieldErrors | null> {
  try {
    await work();
    return null;
  } catch (error) {
    if (error instanceof ApiError && error.code === "validation") return error.details ?? { form: [error.message] };
    throw error;
  }
}

/**
 * The confirmation step of a destructive form: the same form again with `confirm=yes` (works
 * without JavaScript). With `typeName`, the person types the resource's name to confirm.
 */
export function ConfirmForm(props: { action: string; question: Child; button: string; cancel: string; typeName?: string; error?: string; testid: string }) {
  return (
    <form method="post" action={props.action} class="section">
      <p>{props.question}</p>
      {props.error ? <p class="errors">{props.error}</p> : null}
      {props.typeName === undefined ? (
        <input type="hidden" name="confirm" value="yes" />
      ) : (
        <div class="field">
          <label for="confirm-name">
            Type <strong>{props.typeName}</strong> to confirm
          </label>
          <input id="confirm-name" type="text" name="confirm_name" required autocomplete="off" />
          <input type="hidden" name="confirm" value="yes" />
        </div>
      )}
      <p class="presets">
        <button type="submit" class="danger solid" data-testid={props.testid}>
          {props.button}
        </button>
        <a class="button secondary" href={props.cancel}>
          Cancel
        </a>
      </p>
    </form>
  );
}

/** The section of a page that leads to a resource's deletion (its confirmation page at `href`). */
export function DeleteSection(props: { what: string; consequence: string; href: string; testid: string }) {
  const id = `delete-${props.what}-title`;
  return (
    <section class="section" aria-labelledby={id}>
      <h2 id={id}>Delete the {props.what}</h2>
      <p class="muted small">{props.consequence}</p>
      <a class="button danger small" href={props.href} data-testid={props.testid}>
        Delete {props.what}…
      </a>
    </section>
  );
}

/** A status as a badge of a tone of products.css (`ok`, `warn`, `danger`, `gray`). */
export function StatusBadge(props: { status: string; tone: string }) {
  return <span class={`badge ${props.tone}`}>{props.status}</span>;
}

/** The 1-based `?page=` of a request (1 when absent or not a positive integer, at most 10,000). */
export function pageNumber(c: Context, name = "page"): number {
  const n = Number(c.req.query(name));
  return Number.isInteger(n) && n >= 1 ? Math.min(n, 10_000) : 1;
}

/** Previous and next links of a numbered list. */
export function Pager(props: { base: string; page: number; pages: number; name?: string }) {
  if (props.pages <= 1 && props.page <= 1) return null;
  const name = props.name ?? "page";
  const href = (n: number) => `${props.base}?${name}=${n}`;
  return (
    <nav class="pager" aria-label="Pages">
      {props.page > 1 ? (
        <a href={href(props.page - 1)} rel="prev">
          ← Newer
        </a>
      ) : null}
      <span class="muted small">
        Page {props.page} of {Math.max(1, props.pages)}
      </span>
      {props.page < props.pages ? (
        <a href={href(props.page + 1)} rel="next">
          Older →
        </a>
      ) : null}
    </nav>
  );
}

/** The team as the quota sees it (plan, and the owner its usage warnings go to), for metered actions. */
export async function quotaOwnerOf(c: Context<ConsoleEnv>): Promise<QuotaOwner> {
  const team = await getTeam(getDb(c.env.DB), c.get("consoleTeam").id);
  return { teamId: team.id, plan: team.plan, ownerEmail: team.ownerEmail };
}

/** A table's column headings, one `th scope="col"` each. */
export function ColumnHeads(props: { names: string[] }) {
  return (
    <thead>
      <tr>
        {props.names.map((name) => (
          <th scope="col">{name}</th>
        ))}
      </tr>
    </thead>
  );
}

/**
 * A table's horizontal scroll area: a labelled region that keyboard users can focus and scroll
 * (axe: scrollable-region-focusable), around a table wider than the page.
 */
export function TableWrap(props: { label: string; children: Child }) {
  return (
    <div class="table-wrap" role="region" aria-label={props.label} tabindex={0}>
      {props.children}
    </div>
  );
}

/**
 * A part of a page that refreshes itself while `pending` (client/live.ts fetches `url` again and
 * puts the answer's part in its place). `url` is a fragment route under /console answering this
 * same part, rendered by `fragment`; without JavaScript the page says to reload.
 */
export function Live(props: { url: string; pending: boolean; testid?: string; children: Child }) {
  return (
    <div data-live={props.url} data-pending={props.pending ? "true" : "false"} data-testid={props.testid}>
      {props.children}
    </div>
  );
}

/** A fragment route's answer: the part alone, no layout, under the console's headers (no-store, CSP). */
export function fragment(c: Context<ConsoleEnv>, content: HtmlEscapedString | Promise<HtmlEscapedString>): Response | Promise<Response> {
  return c.html(content);
}
