/** @jsxImportSource hono/jsx */
// The one layout of the console and the public pages: the document head (our stylesheet and the
// bundled script, both served from this origin), the team switcher, the product navigation and
// the user menu. Components are plain functions of data.
import { raw } from "hono/html";
import type { Child } from "hono/jsx";
import type { Role } from "../db/schema";
import type { SessionUser } from "./sign-in.service";
import type { TeamChoice } from "./members.service";
import { navEntries } from "./nav";
import { roleAtLeast } from "./session";

/** The static files built from client/ (scripts/build-assets.mjs). */
export const ASSETS = { css: "/assets/console.css", productsCss: "/assets/products.css", js: "/assets/console.js" } as const;

function Document(props: { title: string; bodyClass?: string; children: Child }) {
  return (
    <>
      {raw("<!doctype html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="robots" content="noindex" />
          <title>{`${props.title} · Edge Platform`}</title>
          <link rel="stylesheet" href={ASSETS.css} />
          <link rel="stylesheet" href={ASSETS.productsCss} />
          <script src={ASSETS.js} defer></script>
        </head>
        <body class={props.bodyClass}>{props.children}</body>
      </html>
    </>
  );
}

export function Logo() {
  return (
    <a class="logo" href="/">
      <span class="logo-mark" aria-hidden="true">
        ◆
      </span>
      Edge Platform
    </a>
  );
}

/**
 * Public pages (landing, sign-in, sign-up, link confirmation) and the messages of a signed-in user
 * outside a team: a top bar and a centred column. The top bar offers sign-in and sign-up, or, to
 * the signed-in `user`, the console and signing out.
 */
export function PublicLayout(props: { title: string; wide?: boolean; user?: SessionUser | null; children: Child }) {
  return (
    <Document title={props.title} bodyClass="public">
      <header class="topbar">
        <Logo />
        <nav aria-label="Site">
          <a href="/api/v1/docs">API reference</a>
          {props.user ? (
            <>
              <a href="/console">Console</a>
              <span class="muted small">{props.user.email}</span>
              <form method="post" action="/console/sign-out">
                <button type="submit" class="link-button">
                  Sign out
                </button>
              </form>
            </>
          ) : (
            <>
              <a href="/console/sign-in">Sign in</a>
              <a class="button small" href="/console/sign-up">
                Sign up
              </a>
            </>
          )}
        </nav>
      </header>
      <main class={props.wide ? "public-main wide" : "public-main"}>{props.children}</main>
    </Document>
  );
}

export interface ConsolePageProps {
  title: string;
  user: SessionUser;
  teams: TeamChoice[];
  team: TeamChoice;
  /** The nav entry to mark current (the page's first path segment). */
  active: string;
  /** A one-line message after a post/redirect/get (`?notice=`). */
  notice?: string | null;
  children: Child;
}

/** A signed-in page of a team: sidebar (switcher, navigation, user menu) and the page. */
export function ConsoleLayout(props: ConsolePageProps) {
  const base = `/console/teams/${props.team.id}`;
  return (
    <Document title={`${props.title} · ${props.team.name}`} bodyClass="console">
      <a class="skip" href="#content">
        Skip to content
      </a>
      <aside class="sidebar">
        <Logo />
        <div class="sidebar-full">
          <Navigation {...props} base={base} label="Products" />
        </div>
        {/* Narrow screens: the navigation collapses into this menu (a disclosure: no JavaScript, keyboard reachable). */}
        <details class="mobile-menu">
          <summary>
            Menu <span class="muted small">{props.team.name}</span>
          </summary>
          <Navigation {...props} base={base} label="Products (menu)" />
        </details>
      </aside>
      <main id="content" class="content">
        <h1>{props.title}</h1>
        {props.notice ? (
          <p class="notice" role="status">
            {props.notice}
          </p>
        ) : null}
        {props.children}
      </main>
    </Document>
  );
}

/** The team switcher, the products and the user menu: the sidebar on wide screens, the menu on narrow ones. */
function Navigation(props: ConsolePageProps & { base: string; label: string }) {
  return (
    <>
      <TeamSwitcher teams={props.teams} team={props.team} active={props.active} />
      <nav aria-label={props.label} class="nav">
        <ul>
          {navEntries()
            .filter((entry) => !entry.least || roleAtLeast(props.team.role, entry.least))
            .map((entry) => (
              <li>
                <a href={`${props.base}/${entry.path}`} aria-current={entry.path === props.active ? "page" : undefined}>
                  {entry.label}
                </a>
              </li>
            ))}
        </ul>
      </nav>
      <div class="user-menu">
        <p class="muted small" title={props.user.email}>
          {props.user.email}
          <br />
          <span class="badge">{props.team.role}</span>
        </p>
        <form method="post" action="/console/sign-out">
          <button type="submit" class="link-button">
            Sign out
          </button>
        </form>
        <form method="post" action="/console/sign-out-everywhere">
          <button type="submit" class="link-button">
            Sign out everywhere
          </button>
        </form>
      </div>
    </>
  );
}

/** The team switcher: a disclosure of links (works without JavaScript). */
function TeamSwitcher(props: { teams: TeamChoice[]; team: TeamChoice; active: string }) {
  return (
    <details class="switcher">
      <summary>
        <span class="switcher-label">Team</span>
        <span class="switcher-name">{props.team.name}</span>
        <span class="muted small">{props.team.plan} plan</span>
      </summary>
      <ul>
        {props.teams.map((team) => (
          <li>
            <a href={`/console/teams/${team.id}/${props.active}`} aria-current={team.id === props.team.id ? "true" : undefined}>
              {team.name} <span class="muted small">{team.role}</span>
            </a>
          </li>
        ))}
      </ul>
    </details>
  );
}

/** Who sees a message page: nobody known, a signed-in user, or a member inside one of their teams. */
export interface MessageViewer {
  user?: SessionUser | null;
  teams?: TeamChoice[];
  /** The team whose page failed: the message then shows inside that team's console. */
  team?: TeamChoice | null;
  /** The navigation entry of the page that failed. */
  active?: string;
}

/**
 * A page of the console with nothing to show but a message (errors, no team): inside the team's
 * console (sidebar, switcher, sign-out) when the viewer is a member on one of its pages, under the
 * signed-in top bar for a known user elsewhere, and under the public top bar for anyone else.
 */
export function MessagePage(props: {
  title: string;
  message: string;
  signedIn?: boolean;
  viewer?: MessageViewer;
  /** Where the page sends the reader instead of back to the console. */
  next?: { href: string; label: string };
}) {
  const { user, teams, team, active } = props.viewer ?? {};
  if (user && team && teams) {
    return (
      <ConsoleLayout title={props.title} user={user} teams={teams} team={team} active={active ?? navEntries()[0]!.path}>
        <section class="card message">
          <p>{props.message}</p>
          <p>
            <a href={`/console/teams/${team.id}`}>Back to {team.name}</a>
          </p>
        </section>
      </ConsoleLayout>
    );
  }
  return (
    <PublicLayout title={props.title} user={user}>
      <section class="card narrow">
        <h1>{props.title}</h1>
        <p>{props.message}</p>
        <p>
          {props.next ? (
            <a href={props.next.href}>{props.next.label}</a>
          ) : (
            <a href={props.signedIn === false ? "/console/sign-in" : "/console"}>Back to the console</a>
          )}
        </p>
      </section>
    </PublicLayout>
  );
}

/** An ISO timestamp as a readable UTC date and time (to the minute, or to the second), in a <time> element. */
export function Time(props: { iso: string | null; empty?: string; seconds?: boolean }) {
  if (!props.iso) return <span class="muted">{props.empty ?? "never"}</span>;
  return <time datetime={props.iso}>{props.iso.slice(0, props.seconds ? 19 : 16).replace("T", " ")} UTC</time>;
}

/** Role names as people read them. */
export const ROLE_LABELS: Record<Role, string> = { owner: "Owner", admin: "Admin", developer: "Developer", viewer: "Viewer" };
