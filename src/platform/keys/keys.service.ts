// A team's own keys (docs/ARCHITECTURE.md "Keys over the API"): the console's keys page and
// `GET/POST/DELETE /api/v1/keys` share this service, which builds on the operator's createKey and
// revokeKey. Self-service never widens authority: a key creates only keys whose scopes it holds,
// a sandbox creator makes only sandbox keys with streams no wider than its own (and its caps), the
// sandbox caps and suspensions stay the operator's, and while a sandbox key of the team is
// suspended new sandbox keys start suspended.
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { apiKeys, type MailKeyPolicy } from "../../db/schema";
import { createKey, DEFAULT_MAIL_POLICY, keyView, revokeKey, type KeyRow } from "../admin/admin.service";
import { ApiError } from "../errors";
import { hasScope, type Scope } from "../scopes";

/** Keys a team may hold at once (not revoked). */
export const MAX_KEYS_PER_TEAM = 100;

/** The mail options a team sets on its own keys (caps and suspension are the operator's). */
export interface SelfServiceMail {
  sandbox?: boolean;
  allowed_streams?: string[];
  allowed_recipients?: string[];
}

export interface NewTeamKey {
  name?: string;
  scopes: Scope[];
  mail?: SelfServiceMail;
}

/** Who creates: a key (its scopes and mail policy bound what it creates) or a console member. */
export type KeyCreator = { kind: "key"; scopes: string[]; mail: MailKeyPolicy } | { kind: "member" };

/** A key as the team sees it: never the hash, with when it was last used. */
export function teamKeyView(key: KeyRow) {
  const { team_id: _team, ...view } = keyView(key);
  return { ...view, last_used_at: key.lastUsedAt };
}

/** The team's keys that are not revoked, newest first. */
export async function listTeamKeys(db: Db, teamId: string): Promise<KeyRow[]> {
  return db.query.apiKeys.findMany({ where: and(eq(apiKeys.teamId, teamId), isNull(apiKeys.revokedAt)), orderBy: [desc(apiKeys.createdAt), desc(apiKeys.id)] });
}

/** The name of every key of the team, revoked ones included (the request log names the key of each request). */
export async function teamKeyNames(db: Db, teamId: string): Promise<Map<string, string | null>> {
  const rows = await db.select({ id: apiKeys.id, name: apiKeys.name }).from(apiKeys).where(eq(apiKeys.teamId, teamId));
  return new Map(rows.map((row) => [row.id, row.name]));
}

/** Whether any key of the team is a suspended sandbox key. */
async function hasSuspendedSandboxKey(db: Db, teamId: string): Promise<boolean> {
  const rows = await db
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.teamId, teamId),
        isNull(apiKeys.revokedAt),
        sql`json_extract(${apiKeys.mail}, '$.sandbox') = 1 AND json_extract(${apiKeys.mail}, '$.suspended') = 1`,
      ),
    )
    .limit(1);
  return rows.length > 0;
}

/** The mail policy of a new self-service key, or a 403 when the creator may not grant it. */
export async function selfServiceMail(db: Db, teamId: string, creator: KeyCreator, input: SelfServiceMail = {}): Promise<Partial<MailKeyPolicy>> {
  let policy: Partial<MailKeyPolicy> = {
    sandbox: input.sandbox ?? false,
    allowed_streams: input.allowed_streams ?? DEFAULT_MAIL_POLICY.allowed_streams,
    allowed_recipients: input.allowed_recipients ?? [],
    hourly_cap: null,
    daily_cap: null,
  };
  if (creator.kind === "key" && creator.mail.sandbox) {
    if (input.sandbox === false) throw ApiError.forbidden("A sandbox key can only create sandbox keys");
    const wider = (policy.allowed_streams ?? []).filter((stream) => !creator.mail.allowed_streams.includes(stream));
    if (input.allowed_streams && wider.length > 0) throw ApiError.forbidden(`A sandbox key cannot grant streams it does not hold: ${wider.join(", ")}`);
    policy = {
      ...policy,
      sandbox: true,
      allowed_streams: input.allowed_streams ?? creator.mail.allowed_streams,
      // The operator's caps on the creator bind what it creates.
      hourly_cap: creator.mail.hourly_cap,
      daily_cap: creator.mail.daily_cap,
    };
  }
  if (policy.sandbox && (await hasSuspendedSandboxKey(db, teamId))) policy.suspended = true;
  return policy;
}

/**
 * Creates a key of the team. 403 when a key asks for a scope it lacks itself, or a mail policy it
 * may not grant; 422 past MAX_KEYS_PER_TEAM (counted and written in one statement by createKey's cap).
 */
export async function createTeamKey(db: Db, teamId: string, creator: KeyCreator, input: NewTeamKey): Promise<{ row: KeyRow; key: string }> {
  if (creator.kind === "key") {
    const lacking = input.scopes.filter((scope) => !hasScope(creator.scopes, scope));
    if (lacking.length > 0) throw ApiError.forbidden(`A key cannot grant scopes it does not hold: ${lacking.join(", ")}`);
  }
  const mail = await selfServiceMail(db, teamId, creator, input.mail);
  return createKey(db, teamId, { name: input.name, scopes: input.scopes, mail }, { maxKeys: MAX_KEYS_PER_TEAM });
}

/** Revokes a key of the team (another team's key: 404); it answers 401 from then on. */
export async function revokeTeamKey(db: Db, teamId: string, keyId: string): Promise<KeyRow> {
  return revokeKey(db, keyId, teamId);
}
