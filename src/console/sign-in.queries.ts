// Raw SQL of the sign-in flow, because Drizzle cannot say it: consuming a one-time link is one D1
// batch (one transaction) whose every write is guarded by `INSERT … SELECT … WHERE` the link was
// consumed by this very request (its `session_id` is the session this request creates). A link
// used twice at once, or expired, writes nothing: no user, team, membership or session is
// half-made, and the first request alone signs in.
import type { LinkKind, Role } from "../db/schema";

export interface ConsumeInput {
  linkId: string;
  kind: LinkKind;
  email: string;
  /** The team joined (invite) or created (sign_up). */
  teamId: string | null;
  teamName: string | null;
  role: Role | null;
  userId: string;
  sessionId: string;
  sessionHash: string;
  now: string;
  sessionExpiresAt: string;
}

/** `EXISTS` the link was consumed by this request. */
const CONSUMED = "EXISTS (SELECT 1 FROM console_links WHERE id = ?1 AND session_id = ?2)";

/**
 * An invitation answers to its inviter (docs/ARCHITECTURE.md "People"): it is used only while the
 * member who sent it is still in the team with the right to invite that role (an owner any role, an
 * admin any role but owner), read in the statement that consumes it. Invitations without an inviter
 * (none is made today; rows from before `invited_by`) and other links are not held by it.
 */
const INVITER_MAY = `(kind <> 'invite' OR invited_by IS NULL OR EXISTS (SELECT 1 FROM memberships m WHERE m.team_id = console_links.team_id AND m.user_id = console_links.invited_by AND (m.role = 'owner' OR (m.role = 'admin' AND console_links.role <> 'owner'))))`;

/** The statements of one link consumption, in order; the first one's `changes` says whether it happened. */
export function consumeStatements(d1: D1Database, input: ConsumeInput): D1PreparedStatement[] {
  const statements = [
    d1
      .prepare(`UPDATE console_links SET used_at = ?3, session_id = ?2 WHERE id = ?1 AND used_at IS NULL AND expires_at > ?3 AND ${INVITER_MAY}`)
      .bind(input.linkId, input.sessionId, input.now),
    d1
      .prepare(`INSERT INTO users (id, email, created_at) SELECT ?3, ?4, ?5 WHERE ${CONSUMED} ON CONFLICT (email) DO NOTHING`)
      .bind(input.linkId, input.sessionId, input.userId, input.email, input.now),
  ];
  if (input.kind === "sign_up") {
    statements.push(
      d1
        .prepare(`INSERT INTO teams (id, name, plan, owner_email, created_at, updated_at) SELECT ?3, ?4, 'free', ?5, ?6, ?6 WHERE ${CONSUMED}`)
        .bind(input.linkId, input.sessionId, input.teamId, input.teamName, input.email, input.now),
    );
  }
  if (input.kind !== "sign_in") {
    // An invitation of someone already in the team keeps the role they have.
    statements.push(
      d1
        .prepare(
          `INSERT INTO memberships (team_id, user_id, role, created_at) SELECT ?3, u.id, ?4, ?5 FROM users u WHERE u.email = ?6 AND ${CONSUMED} ON CONFLICT (team_id, user_id) DO NOTHING`,
        )
        .bind(input.linkId, input.sessionId, input.teamId, input.kind === "sign_up" ? "owner" : input.role, input.now, input.email),
    );
  }
  statements.push(
    d1
      .prepare(
        `INSERT INTO sessions (id, token_hash, user_id, created_at, last_used_at, expires_at) SELECT ?2, ?3, u.id, ?4, ?4, ?5 FROM users u WHERE u.email = ?6 AND ${CONSUMED}`,
      )
      .bind(input.linkId, input.sessionId, input.sessionHash, input.now, input.sessionExpiresAt, input.email),
    // The sign-in is recorded in every team of the user (each team's members page shows it).
    d1
      .prepare(
        `INSERT INTO console_actions (id, team_id, actor, action, target, created_at)
         SELECT lower(hex(randomblob(16))), m.team_id, ?3, ?4, NULL, ?5 FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = ?3 AND ${CONSUMED}`,
      )
      .bind(input.linkId, input.sessionId, input.email, input.kind === "sign_in" ? "signed_in" : input.kind === "sign_up" ? "signed_up" : "joined", input.now),
  );
  return statements;
}
