// Console tables (docs/ARCHITECTURE.md "Console and team self-service"): users (an email address),
// memberships (a user's role in a team), one-time links (sign-in, sign-up, invitations; stored
// hashed), sessions (stored hashed) and the record of console actions.
import { index, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { teams } from "./platform";

export const ROLES = ["owner", "admin", "developer", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    /** Lower-cased address: the identity of the user. */
    email: text("email").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("users_email_idx").on(t.email)],
);

export const memberships = sqliteTable(
  "memberships",
  {
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role").$type<Role>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.userId] }), index("memberships_user_idx").on(t.userId)],
);

export const LINK_KINDS = ["sign_in", "sign_up", "invite"] as const;
export type LinkKind = (typeof LINK_KINDS)[number];

/**
 * One-time links: `sign_in` (15 min), `sign_up` (15 min; carries the team name, nothing exists
 * before it is used) and `invite` (7 days; carries the team and the role: the pending invitation).
 */
export const consoleLinks = sqliteTable(
  "console_links",
  {
    id: text("id").primaryKey(),
    /** SHA-256 (hex) of the token; the token exists only in the mail. */
    tokenHash: text("token_hash").notNull(),
    kind: text("kind").$type<LinkKind>().notNull(),
    email: text("email").notNull(),
    teamId: text("team_id").references(() => teams.id, { onDelete: "cascade" }),
    role: text("role").$type<Role>(),
    teamName: text("team_name"),
    /** The user who sent an invitation. */
    invitedBy: text("invited_by"),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
    /** The session the link's use created (what guards the writes of its use: sign-in.queries.ts). */
    sessionId: text("session_id"),
  },
  (t) => [
    uniqueIndex("console_links_token_idx").on(t.tokenHash),
    index("console_links_team_idx").on(t.teamId, t.kind),
    index("console_links_expires_idx").on(t.expiresAt),
  ],
);

export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    /** SHA-256 (hex) of the cookie's token. */
    tokenHash: text("token_hash").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
    /** Moved forward at most once an hour (console/session.ts): idle expiry is 30 days after it. */
    lastUsedAt: text("last_used_at").notNull(),
    /** Absolute expiry: 90 days after sign-in. */
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [uniqueIndex("sessions_token_idx").on(t.tokenHash), index("sessions_user_idx").on(t.userId), index("sessions_last_used_idx").on(t.lastUsedAt)],
);

/** Who did what in the console (or the operator for a team), and when; shown on the members page. */
export const consoleActions = sqliteTable(
  "console_actions",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").references(() => teams.id, { onDelete: "cascade" }),
    /** The acting user's address at the time (`operator` for the operator API). */
    actor: text("actor").notNull(),
    action: text("action").notNull(),
    /** What it was done to: a key's name and prefix, a member's address. */
    target: text("target"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("console_actions_team_idx").on(t.teamId, t.createdAt), index("console_actions_created_idx").on(t.createdAt)],
);

/**
 * Values a console POST made that its next page shows once (a new key, a token, a share link):
 * keyed by the session and the page's path, sealed with ENCRYPTION_KEY, deleted by the read that
 * shows them (console/flash.ts) or after FLASH_TTL_MS by the retention job. Never in a URL.
 */
export const consoleFlashes = sqliteTable(
  "console_flashes",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    /** The path of the page that shows it, without the query. */
    path: text("path").notNull(),
    /** encryptSecret(ENCRYPTION_KEY, JSON of the value). */
    sealed: text("sealed").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.path] }), index("console_flashes_expires_idx").on(t.expiresAt)],
);
