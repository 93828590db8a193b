/** @jsxImportSource hono/jsx */
// Small pieces the product pages share: a snippet with its copy button, a status badge, numbered
// paging (`?page=`) for lists that page by number, and the team as the quota sees it.
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import { getDb } from "../../db/client";
import { getTeam } from "../../platform/admin/admin.service";
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
