// A team's own keys (docs/ARCHITECTURE.md "Keys over the API"): the console's keys page and
// `GET/POST/DELETE /api/v1/keys` share this service, which builds on the operator's createKey and
// revokeKey. A key mints only what it holds: scopes, streams and recipients a subset of its own (a
// live key without a recipient list bounds nothing there), caps no higher than its own, and it
// revokes only keys whose scopes it holds. Self-service sandbox keys get the team's sandbox caps
// (SANDBOX_HOURLY_CAP / SANDBOX_DAILY_CAP) or their creator's when smaller; suspensions are the
// team's and stay the operator's: a sandbox key minted while the team is suspended starts suspended.
import { and, desc, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { apiKeys, teams, type MailKeyPolicy } from "../../db/schema";
import { createKey, DEFAULT_MAIL_POLICY, keyView, revokeKey, type KeyRow } from "../admin/admin.service";
import type { SandboxCaps } from "../config";
import { ApiError } from "../errors";
import { hasScope, type Scope } from "../scopes";
import { orNotFound } from "../tenancy";

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

/** Whether the team's sandbox sending is suspended (the operator alone lifts it). */
async function teamSandboxSuspended(db: Db, teamId: string): Promise<boolean> {
  const [row] = await db.select({ at: teams.sandboxSuspendedAt }).from(teams).where(eq(teams.id, teamId)).limit(1);
  return row?.at !== null && row?.at !== undefined;
}

/** The name of every key of the team, revoked ones included (the request log names the key of each request). */
export async function teamKeyNames(db: Db, teamId: string): Promise<Map<string, string | null>> {
  const rows = await db.select({ id: apiKeys.id, name: apiKeys.name }).from(apiKeys).where(eq(apiKeys.teamId, teamId));
  return new Map(rows.map((row) => [row.id, row.name]));
}

/** The smaller of two caps, null standing for none. */
const smaller = (a: number | null, b: number): number => (a === null ? b : Math.min(a, b));

const lower = (address: string) => address.trim().toLowerCase();

/**
 * The mail policy of a new self-service key, or a 403 when the creator may not grant it: a key
 * grants streams and recipients it holds (a sandbox key holds only its list; a live key holds every
 * recipient unless it has a list), its children are sandbox keys when it is one, and a sandbox key's
 * caps are the team's, or the creator's when smaller.
 */
export async function selfServiceMail(
  db: Db,
  teamId: string,
  creator: KeyCreator,
  teamCaps: SandboxCaps,
  input: SelfServiceMail = {},
): Promise<Partial<MailKeyPolicy>> {
  const held = creator.kind === "key" ? creator.mail : null;
  if (held?.sandbox && input.sandbox === false) throw ApiError.forbidden("A sandbox key can only create sandbox keys");
  const sandbox = held?.sandbox ? true : (input.sandbox ?? false);
  let streams = input.allowed_streams ?? DEFAULT_MAIL_POLICY.allowed_streams;
  let recipients = input.allowed_recipients ?? [];
  if (held) {
    const wider = (input.allowed_streams ?? []).filter((stream) => !held.allowed_streams.includes(stream));
    if (wider.length > 0) throw ApiError.forbidden(`A key cannot grant streams it does not hold: ${wider.join(", ")}`);
    streams = input.allowed_streams ?? held.allowed_streams;
    if (held.sandbox || held.allowed_recipients.length > 0) {
      const mine = new Set(held.allowed_recipients.map(lower));
      const outside = recipients.filter((address) => !mine.has(lower(address)));
      if (outside.length > 0) throw ApiError.forbidden(`A key cannot grant recipients it does not hold: ${outside.join(", ")}`);
      recipients = input.allowed_recipients ?? held.allowed_recipients;
    }
  }
  return {
    sandbox,
    allowed_streams: streams,
    allowed_recipients: recipients,
    hourly_cap: sandbox ? smaller(held?.sandbox ? held.hourly_cap : null, teamCaps.hourly) : null,
    daily_cap: sandbox ? smaller(held?.sandbox ? held.daily_cap : null, teamCaps.daily) : null,
    suspended: sandbox && (await teamSandboxSuspended(db, teamId)),
  };
}

/**
 * Creates a key of the team. 403 when a key asks for a scope it lacks itself, or a mail policy it
 * may not grant; 422 past MAX_KEYS_PER_TEAM (counted and written in one statement by createKey's cap).
 */
export async function createTeamKey(
  db: Db,
  teamId: string,
  creator: KeyCreator,
  input: NewTeamKey,
  teamCaps: SandboxCaps,
): Promise<{ row: KeyRow; key: string }> {
  if (creator.kind === "key") {
    const lacking = input.scopes.filter((scope) => !hasScope(creator.scopes, scope));
    if (lacking.length > 0) throw ApiError.forbidden(`A key cannot grant scopes it does not hold: ${lacking.join(", ")}`);
  }
  const mail = await selfServiceMail(db, teamId, creator, teamCaps, input.mail);
  return createKey(db, teamId, { name: input.name, scopes: input.scopes, mail }, { maxKeys: MAX_KEYS_PER_TEAM });
}

const keyNotFound = () => ApiError.notFound("Key not found");

/**
 * Revokes a key of the team (another team's key: 404); it answers 401 from then on. A key revokes
 * only keys whose scopes it holds (403 otherwise): a `keys:write` key cannot end a full-access one.
 */
export async function revokeTeamKey(db: Db, teamId: string, keyId: string, creator: KeyCreator = { kind: "member" }): Promise<KeyRow> {
  if (creator.kind === "key") {
    const target = orNotFound(
      await db.query.apiKeys.findFirst({ where: and(eq(apiKeys.id, keyId), eq(apiKeys.teamId, teamId), isNull(apiKeys.revokedAt)) }),
      keyNotFound,
    );
    const lacking = target.scopes.filter((scope) => !hasScope(creator.scopes, scope as Scope));
    if (lacking.length > 0) throw ApiError.forbidden(`A key cannot revoke a key with scopes it does not hold: ${lacking.join(", ")}`);
  }
  return revokeKey(db, keyId, teamId);
}
