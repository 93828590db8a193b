/** @jsxImportSource hono/jsx */
// How a console page answers: the layout around the page's content, with the viewer, their teams
// and the current team from the session middleware, and the notice of a post/redirect/get.
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ConsoleLayout } from "./layout";
import type { ConsoleEnv } from "./session";

export interface PageOptions {
  title: string;
  /** The navigation entry (nav.ts) to mark current. */
  active: string;
  status?: ContentfulStatusCode;
  /**
   * The page's notices by code: a redirect after a POST adds `?notice=<code>` and the page shows
   * the text. Codes only, so no link can put words of its own on a console page.
   */
  notices?: Record<string, string>;
}

/** Renders a page of the current team. */
export function page(c: Context<ConsoleEnv>, options: PageOptions, content: Child): Response | Promise<Response> {
  const code = c.req.query("notice");
  const notice = code && options.notices && Object.hasOwn(options.notices, code) ? options.notices[code] : null;
  return c.html(
    <ConsoleLayout
      title={options.title}
      user={c.get("consoleUser")}
      teams={c.get("consoleTeams")}
      team={c.get("consoleTeam")}
      active={options.active}
      notice={notice}
    >
      {content}
    </ConsoleLayout>,
    options.status ?? 200,
  );
}

/** The path of a page of the current team: `teamPath(c, "keys")` → `/console/teams/<id>/keys`. */
export function teamPath(c: Context<ConsoleEnv>, path: string): string {
  return `/console/teams/${c.get("consoleTeam").id}/${path}`;
}

/** Post/redirect/get: back to a page of the team, with a notice code. */
export function redirectTo(c: Context<ConsoleEnv>, path: string, notice?: string): Response {
  return c.redirect(`${teamPath(c, path)}${notice ? `?notice=${encodeURIComponent(notice)}` : ""}`, 303);
}
