/** @jsxImportSource hono/jsx */
// The console under /console and the landing page at /: security headers on every page, the
// default body limit of its forms (1 MB, a 413 page; its pages are not OpenAPI routes, so they
// declare it here for all of them), a local server's other addresses sent to APP_URL's (so the
// session cookie and the Origin rule work), the Origin rule for every state-changing request, the public pages (sign-in and its links), then
// every page group of pages/index.ts and of the products behind the session and the team's membership. Errors render
// as pages, not JSON.
import { log } from "../platform/log";
import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../env";
import { JSON_BODY_LIMIT, limitBody } from "../platform/body";
import { toApiError } from "../platform/handle-error";
import { MessagePage, type MessageViewer } from "./layout";
import { navEntries } from "./nav";
import { LandingPage } from "./pages/landing";
import { PAGE_GROUPS } from "./pages/index";
import { publicPages } from "./pages/public";
import { localHost, pageHeaders, readSessionIfAny, requireSession, sameOrigin, teamAccess, type ConsoleEnv } from "./session";
import { settings } from "../platform/config";
import type { ProductDefinition } from "../platform/products";

/** The title of a console error page, by status. */
const TITLES: Partial<Record<number, string>> = {
  403: "Not allowed",
  404: "Page not found",
  409: "Not possible",
  413: "Too large",
  422: "Check what you entered",
  429: "Too many requests",
};
/** Where the API's message is not the console's language: what happened and what to do. */
const MESSAGES: Partial<Record<number, string>> = {
  413: `What you entered is more than a console form takes (${JSON_BODY_LIMIT / 1024 / 1024} MB at most). Shorten it and send the form again; nothing was saved.`,
};

/** Errors of a console request as a page with the error's status. */
function renderError(error: unknown, c: Context<ConsoleEnv>): Response | Promise<Response> {
  const apiError = toApiError(error);
  if (!apiError) {
    log.error("unhandled console error", { request_id: c.get("requestId"), path: c.req.path, error: String(error), stack: (error as Error)?.stack });
  }
  const status = (apiError?.status ?? 500) as ContentfulStatusCode;
  const message =
    MESSAGES[status] ??
    (apiError && status < 500
      ? apiError.details
        ? Object.entries(apiError.details)
            .map(([field, errors]) => `${field} ${errors.join(", ")}`)
            .join("; ")
        : apiError.message
      : "Something went wrong on our side. Try again.");
  for (const [name, value] of Object.entries(apiError?.headers ?? {})) c.header(name, value);
  return viewerOf(c).then((viewer) => c.html(<MessagePage title={TITLES[status] ?? "Something went wrong"} message={message} viewer={viewer} />, status));
}

/**
 * Who is looking at a message page: the session's user (read here when no middleware read it: a
 * form refused for its size before the session, an address no route knows), and the team of a
 * /console/teams/:team_id/ address when the user is its member, with the page's navigation entry.
 */
async function viewerOf(c: Context<ConsoleEnv>): Promise<MessageViewer> {
  await readSessionIfAny(c);
  const teams = c.get("consoleTeams");
  const [, , under, teamId, segment] = c.req.path.split("/");
  const team = c.get("consoleTeam") ?? (under === "teams" ? teams?.find((t) => t.id === teamId) : undefined);
  return {
    user: c.get("consoleUser"),
    teams,
    team,
    active: team && navEntries().some((entry) => entry.path === segment) ? segment : undefined,
  };
}

/** The console, with the shell's page groups and then each product's (built by the app). */
export function createConsoleRouter(products: readonly ProductDefinition[]): Hono<ConsoleEnv> {
  const consoleRouter = new Hono<ConsoleEnv>();
  consoleRouter.use("*", pageHeaders());
  consoleRouter.use("*", localHost());
  consoleRouter.use("*", limitBody());
  consoleRouter.use("*", sameOrigin());
  consoleRouter.onError(renderError);

  consoleRouter.route("/", publicPages);

  // Signed in: the first team's keys, or a page saying there is no team.
  consoleRouter.get("/", requireSession(), (c) => {
    const [first] = c.get("consoleTeams");
    if (first) return c.redirect(`/console/teams/${first.id}/keys`, 303);
    return c.html(
      <MessagePage
        title="No team yet"
        message="You are not a member of any team. Ask an owner for an invitation, or create a team from the sign-up page."
        viewer={{ user: c.get("consoleUser") }}
        next={{ href: "/console/sign-up", label: "Create a team" }}
      />,
    );
  });

  consoleRouter.use("/teams/:team_id", requireSession(), teamAccess());
  consoleRouter.use("/teams/:team_id/*", requireSession(), teamAccess());
  consoleRouter.get("/teams/:team_id", (c) => c.redirect(`/console/teams/${c.req.param("team_id")}/keys`, 303));
  for (const group of PAGE_GROUPS) consoleRouter.route("/teams/:team_id", group);
  for (const product of products) if (product.console) consoleRouter.route("/teams/:team_id", product.console.pages);

  // Anything else: 404, inside the team's console on a team's address, greeting a signed-in user elsewhere.
  consoleRouter.all("*", async (c) =>
    c.html(<MessagePage title="Page not found" message="There is no console page at this address." viewer={await viewerOf(c)} />, 404),
  );

  return consoleRouter;
}

/** The landing page at `/`. */
export const landingRouter = new Hono<AppEnv>();
landingRouter.use("/", pageHeaders());
landingRouter.get("/", (c) => c.html(<LandingPage appUrl={settings(c.env).appUrl} />));
