// The console's middleware: the security headers of every page (strict CSP, no framing), the
// Origin rule of state-changing requests, the session cookie, and team access. Nothing is cached
// between requests: each team page reads the session and the user's memberships from D1, so a
// sign-out or a removed membership ends access at the next request.
import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../env";
import { matchedRoutes } from "hono/route";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { getDb, type Db } from "../db/client";
import type { Role } from "../db/schema";
import { ApiError } from "../platform/errors";
import { loadSessionWith, SESSION_COOKIE, SESSION_MAX_MS, type SessionUser } from "./sign-in.service";
import { teamsOf, type TeamChoice } from "./members.service";
import { settings } from "../platform/config";

declare module "hono" {
  /** What a console page knows about its viewer, set by requireSession() and teamAccess(). */
  interface ContextVariableMap {
    consoleUser: SessionUser;
    /** Every team of the user (the team switcher). */
    consoleTeams: TeamChoice[];
    /** The team of a /console/teams/:team_id page, with the user's role in it. */
    consoleTeam: TeamChoice;
    /** The rows of the page's own reads made with the session's (teamPageReads), by the page's path. */
    consolePageRead?: { path: string; rows: unknown[] };
  }
}

/** The environment of console routers: the app's (the console's variables are in ContextVariableMap). */
export type ConsoleEnv = AppEnv;

/**
 * Headers of every console and landing page: scripts and styles only from this origin (the
 * bundled files of client/), no inline script or style, no framing, no caching of pages that may
 * hold a secret shown once.
 */
export const PAGE_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  // same-origin, not no-referrer: a browser sends `Origin: null` on a form POST under no-referrer.
  "referrer-policy": "same-origin",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
  "cross-origin-opener-policy": "same-origin",
};

/**
 * Sets PAGE_HEADERS on every answer. A route may set its own `content-security-policy` and
 * `x-frame-options` instead (the email preview, framed by the console, and the page that frames
 * it): those two are kept when the route set them.
 */
export function pageHeaders(): MiddlewareHandler {
  return async function pageHeadersMiddleware(c, next) {
    await next();
    for (const [name, value] of Object.entries(PAGE_HEADERS)) {
      if (ROUTE_OWNED.has(name) && c.res.headers.has(name)) continue;
      c.res.headers.set(name, value);
    }
  };
}

const ROUTE_OWNED = new Set(["content-security-policy", "x-frame-options"]);

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/** A loopback host name: localhost (and its subdomains), 127.0.0.0/8, [::1]. */
function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname.endsWith(".localhost") || /^127(\.\d{1,3}){3}$/.test(hostname) || hostname === "[::1]";
}

/**
 * A local server answers on several addresses (wrangler prints 127.0.0.1, APP_URL says
 * localhost), but the session cookie and the Origin rule belong to APP_URL's alone: a console
 * page read on another loopback address is sent (307) to the same path at APP_URL's origin, so
 * signing in there works instead of ending at a refusal. Deployed servers (APP_URL not loopback)
 * are left alone.
 */
export function localHost(): MiddlewareHandler<AppEnv> {
  return async function localHostMiddleware(c, next) {
    const { appOrigin } = settings(c.env);
    const url = new URL(c.req.url);
    if (
      (c.req.method === "GET" || c.req.method === "HEAD") &&
      url.origin !== appOrigin &&
      isLoopback(url.hostname) &&
      isLoopback(new URL(appOrigin).hostname)
    ) {
      return c.redirect(`${appOrigin}${url.pathname}${url.search}`, 307);
    }
    await next();
  };
}

/**
 * Refuses (403) every state-changing request whose Origin is missing or is not APP_URL's, naming
 * the address the console is at (a form sent from another address of the same server).
 */
export function sameOrigin(): MiddlewareHandler<AppEnv> {
  return async function sameOriginMiddleware(c, next) {
    const { appOrigin } = settings(c.env);
    const origin = c.req.header("origin");
    if (!SAFE.has(c.req.method) && origin !== appOrigin) {
      const from = origin && origin !== "null" ? ` (it was sent from ${origin})` : "";
      throw new ApiError("forbidden", `This request did not come from the console${from}. Open the console at ${appOrigin}/console and send it again.`);
    }
    await next();
  };
}

/** Sets the session cookie: HttpOnly, SameSite=Lax, Path=/console, Secure when APP_URL is https. */
export function setSessionCookie(c: Context<AppEnv>, token: string): void {
  setCookie(c, SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: "Lax",
    path: "/console",
    secure: settings(c.env).https,
    maxAge: SESSION_MAX_MS / 1000,
  });
}

export function clearSessionCookie(c: Context<AppEnv>): void {
  deleteCookie(c, SESSION_COOKIE, { path: "/console", secure: settings(c.env).https });
}

/** Sets the session's user and their teams on the context; false when the request carries no live session. */
async function readSession(c: Context<ConsoleEnv>): Promise<boolean> {
  const db = getDb(c.env.DB);
  // The session, the user's teams (by the session's user id) and the page's own reads, if it
  // declared them, in one D1 round trip.
  const page = pageReadsOf(c, db);
  const session = await loadSessionWith(db, getCookie(c, SESSION_COOKIE), (userId) => teamsOf(db, userId), page?.items);
  if (!session) return false;
  c.set("consoleUser", session.user);
  c.set("consoleTeams", session.read);
  if (page) c.set("consolePageRead", { path: page.path, rows: session.also });
  return true;
}

type Reads = readonly [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]];
type MakeReads = (db: Db, params: Record<string, string>) => Reads;

/** Where team pages are mounted in the console, and the reads each declared, by its path below it. */
const TEAM_PAGES = "/teams/:team_id";
const PAGE_READS = new Map<string, MakeReads>();

/**
 * A team page's D1 reads (GET `/teams/:team_id<path>`), made in the same round trip as the
 * session's, so the page's first binding call is not a second D1 read. `make` gets the page's
 * route parameters; its reads run BEFORE team access is checked, so each must be scoped by
 * `params.team_id` (their rows reach the page only once access has passed, and a page of another
 * team is a 404 as ever). Answers the function the page calls for the rows: those of the session's
 * batch, or (a route this could not match) the same reads made then.
 */
export function teamPageReads<Q extends Reads>(
  path: string,
  make: (db: Db, params: Record<string, string>) => Q,
): (c: Context<ConsoleEnv>) => Promise<BatchResponse<Q>> {
  PAGE_READS.set(path, make);
  return async (c) => {
    const made = c.get("consolePageRead");
    if (made?.path === path) return made.rows as BatchResponse<Q>;
    const db = getDb(c.env.DB);
    return (await db.batch(make(db, c.req.param()))) as BatchResponse<Q>;
  };
}

/** The reads the matched team page declared, with its parameters taken from the request's path. */
function pageReadsOf(c: Context<ConsoleEnv>, db: Db): { path: string; items: Reads } | null {
  if (c.req.method !== "GET" || PAGE_READS.size === 0) return null;
  for (const route of matchedRoutes(c)) {
    const at = route.path.indexOf(TEAM_PAGES);
    if (route.method !== "GET" || at < 0) continue;
    const path = route.path.slice(at + TEAM_PAGES.length);
    const make = PAGE_READS.get(path);
    const params = make ? paramsOf(route.path, c.req.path) : null;
    if (!make || !params) continue;
    return { path, items: make(db, params) };
  }
  return null;
}

/** The `:name` segments of a route pattern read from a path it matched; null when they do not line up. */
function paramsOf(pattern: string, path: string): Record<string, string> | null {
  const names = pattern.split("/");
  const values = path.split("/");
  if (names.length !== values.length) return null;
  const params: Record<string, string> = {};
  try {
    names.forEach((name, i) => {
      if (name.startsWith(":")) params[name.slice(1)] = decodeURIComponent(values[i]!);
    });
  } catch {
    return null;
  }
  return params;
}

/** The session's user, or a redirect (303) to the sign-in page. */
export function requireSession(): MiddlewareHandler<ConsoleEnv> {
  return async function requireSessionMiddleware(c, next) {
    if (!(await readSession(c))) return c.redirect("/console/sign-in", 303);
    await next();
  };
}

/**
 * Sets the session's user and teams on the context when the request carries a live session and
 * nothing read it yet (a page anyone may see that greets a signed-in user: an error, a 404).
 * Never throws: a session that cannot be read leaves the viewer unknown.
 */
export async function readSessionIfAny(c: Context<ConsoleEnv>): Promise<void> {
  if (c.get("consoleUser") || getCookie(c, SESSION_COOKIE) === undefined) return;
  await readSession(c).catch(() => false);
}

/** The team of `:team_id` among the user's teams; any other id (another team's, unknown) is a 404. */
export function teamAccess(): MiddlewareHandler<ConsoleEnv> {
  return async function teamAccessMiddleware(c, next) {
    const team = c.get("consoleTeams").find((t) => t.id === c.req.param("team_id"));
    if (!team) throw ApiError.notFound("Page not found");
    c.set("consoleTeam", team);
    await next();
  };
}

/** What each role may do (docs/ARCHITECTURE.md "People"). */
const RANK: Record<Role, number> = { viewer: 0, developer: 1, admin: 2, owner: 3 };

/** True when `role` is at least `least`. */
export function roleAtLeast(role: Role, least: Role): boolean {
  return RANK[role] >= RANK[least];
}

/** Refuses (403) unless the viewer's role in the team is at least `least`. */
export function requireRole(c: Context<ConsoleEnv>, least: Role): void {
  if (!roleAtLeast(c.get("consoleTeam").role, least)) throw new ApiError("forbidden", "Your role in this team does not allow this");
}
