/** @jsxImportSource hono/jsx */
// The requests page: the team's request log (the requests made with its API keys in the last 7
// days, newest first: the time to the second, the key by its name and prefix), filtered by status class, paged by cursor; an error row opens to the error
// body we answered (<details>: no JavaScript needed). Every member reads it. Same service as GET
// /api/v1/requests (platform/request-log/request-log.service.ts).
import { Hono } from "hono";
import { z } from "zod";
import { ApiError, zodDetails } from "../../platform/errors";
import { listRequests, STATUS_CLASSES, type LoggedRequest } from "../../platform/request-log/request-log.service";
import { Time } from "../layout";
import { getDb } from "../../db/client";
import { teamKeyNames } from "../../platform/keys/keys.service";
import { TableWrap, ColumnHeads } from "./parts";
import { page, teamPath } from "../render";
import type { ConsoleEnv } from "../session";

export const requestsPages = new Hono<ConsoleEnv>();

const PAGE_SIZE = 50;

const Query = z.object({
  status: z.enum(STATUS_CLASSES).optional(),
  cursor: z.string().max(200).optional(),
});

/** The address of a filtered page. */
function filterHref(base: string, status: string | undefined, cursor?: string): string {
  const params = new URLSearchParams();
  if (status) params.set("status", status);
  if (cursor) params.set("cursor", cursor);
  const query = params.toString();
  return query ? `${base}?${query}` : base;
}

function statusTone(status: number): string {
  if (status >= 500) return "danger";
  if (status >= 400) return "warn";
  return "gray";
}

function RequestRow(props: { request: LoggedRequest; keyName: string | null | undefined }) {
  const r = props.request;
  return (
    <tr data-testid="request-row" data-status={r.status} data-request-id={r.request_id}>
      <td class="nowrap">
        <Time iso={r.created_at} seconds />
      </td>
      <td>
        <code>{r.method}</code>
      </td>
      <td class="path">
        <code>{r.path}</code>
        {r.error !== null ? (
          <details class="error-body">
            <summary>Error body</summary>
            <pre>{r.error}</pre>
          </details>
        ) : null}
      </td>
      <td>
        <span class={`badge ${statusTone(r.status)}`}>{r.status}</span>
      </td>
      <td class="nowrap">{r.latency_ms} ms</td>
      <td>
        {props.keyName ? <span class="key-name">{props.keyName}</span> : props.keyName === undefined ? <span class="muted small">deleted key</span> : null}{" "}
        <code title={`key ${r.key_id}`} class="small">
          {r.key_prefix}…
        </code>
      </td>
      <td>
        <code class="small">{r.request_id}</code>
      </td>
    </tr>
  );
}

requestsPages.get("/requests", async (c) => {
  const parsed = Query.safeParse({ status: c.req.query("status") || undefined, cursor: c.req.query("cursor") || undefined });
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  const { status, cursor } = parsed.data;
  const base = teamPath(c, "requests");
  const teamId = c.get("consoleTeam").id;
  const [result, keyNames] = await Promise.all([listRequests(c.env, teamId, { status, cursor, limit: PAGE_SIZE }), teamKeyNames(getDb(c.env.DB), teamId)]);
  const filters: Array<{ label: string; value: string | undefined }> = [
    { label: "All", value: undefined },
    ...STATUS_CLASSES.map((value) => ({ label: value, value })),
  ];
  return page(
    c,
    { title: "Requests", active: "requests" },
    <>
      <p class="muted">
        The requests made with your team's API keys in the last 7 days (at most the newest 10,000), newest first. Request bodies are never kept; an error shows
        the body we answered. Log ingest, public pages and this console are not listed. Also at <code>GET /api/v1/requests</code> with a{" "}
        <code>billing:read</code> key.
      </p>
      <nav aria-label="Filter by status" class="filters">
        {filters.map((f) => (
          <a href={filterHref(base, f.value)} aria-current={f.value === status ? "page" : undefined} class="filter">
            {f.label}
          </a>
        ))}
      </nav>
      <section class="section">
        {result.data.length === 0 ? (
          <p class="empty">
            {cursor
              ? "No older requests."
              : status
                ? `No ${status} requests in the last 7 days.`
                : "No requests in the last 7 days. Requests made with an API key show up here moments after they answer."}
          </p>
        ) : (
          <TableWrap label="Requests, newest first">
            <table class="requests">
              <caption class="skip">{status ? `${status} requests, newest first` : "Requests, newest first"}</caption>
              <ColumnHeads names={["Time", "Method", "Path", "Status", "Latency", "Key", "Request id"]} />
              <tbody>
                {result.data.map((request) => (
                  <RequestRow request={request} keyName={keyNames.get(request.key_id)} />
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
        <p class="pager">
          {cursor ? <a href={filterHref(base, status)}>Newest</a> : null}
          {result.pagination.next_cursor ? (
            <a href={filterHref(base, status, result.pagination.next_cursor)} rel="next">
              Older requests
            </a>
          ) : null}
        </p>
      </section>
    </>,
  );
});
