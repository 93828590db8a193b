// Client keys of the flags product (`fck_…`): one environment each, for browsers and mobile apps.
// Stored as a SHA-256 hash with a visible prefix; the plaintext is answered once, at creation.
// An isolate resolves a key once and trusts the answer for CLIENT_KEY_TTL_MS (unknown keys too),
// so a deleted key is refused at once by the isolate that deleted it and by every other within
// that bound, the same bound as a flag change.
import { and, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { flagClientKeys, teams } from "../../db/schema";
import { nowIso } from "../../platform/clock";
import { randomToken, sha256Hex } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { IsolateCache } from "../../platform/isolate-cache";
import { insertUnderCap } from "../../platform/caps";
import { ownedBy, ownedRow, orNotFound, uuidOr404 } from "../../platform/tenancy";
import { flagStore } from "./flags.store";

/** How long an isolate trusts a resolved (or unknown) client key. */
export const CLIENT_KEY_TTL_MS = 5_000;
/** Client keys per environment. */
export const CLIENT_KEYS_MAX = 20;
const CLIENT_KEY_FORMAT = /^fck_[A-Za-z0-9_-]{43}$/;

export const isClientKey = (token: string) => token.startsWith("fck_");

/** The caller behind a client key. */
export interface ClientPrincipal {
  keyId: string;
  teamId: string;
  plan: string;
  ownerEmail: string | null;
  environment: string;
  allowedOrigins: string[];
}

export interface ClientKeyView {
  id: string;
  name: string;
  environment: string;
  prefix: string;
  allowed_origins: string[];
  created_at: string;
}

const view = (row: typeof flagClientKeys.$inferSelect): ClientKeyView => ({
  id: row.id,
  name: row.name,
  environment: row.environment,
  prefix: row.prefix,
  allowed_origins: row.allowedOrigins,
  created_at: row.createdAt,
});

const notFound = () => ApiError.notFound("Client key not found");

async function requireEnvironment(env: Env, teamId: string, environment: string): Promise<void> {
  const envs = await flagStore(env, teamId).environments();
  if (!envs.some((e) => e.key === environment)) throw ApiError.notFound("Environment not found");
}

export async function listClientKeys(env: Env, teamId: string, environment: string): Promise<ClientKeyView[]> {
  await requireEnvironment(env, teamId, environment);
  const rows = await getDb(env.DB)
    .select()
    .from(flagClientKeys)
    .where(and(ownedBy(flagClientKeys, teamId), eq(flagClientKeys.environment, environment)))
    .orderBy(flagClientKeys.createdAt);
  return rows.map(view);
}

export async function createClientKey(
  env: Env,
  teamId: string,
  environment: string,
  input: { name?: string; allowed_origins?: string[] },
): Promise<ClientKeyView & { key: string }> {
  await requireEnvironment(env, teamId, environment);
  const key = randomToken(32, "fck_");
  const row = {
    id: crypto.randomUUID(),
    teamId,
    environment,
    name: input.name ?? "Client key",
    prefix: key.slice(0, 10),
    keyHash: await sha256Hex(key),
    allowedOrigins: input.allowed_origins ?? [],
    createdAt: nowIso(),
  };
  // Checked and written in one statement, so parallel creates cannot pass the cap (per team and environment).
  const stored = await insertUnderCap(
    getDb(env.DB),
    flagClientKeys,
    row,
    { column: flagClientKeys.teamId, value: teamId, where: eq(flagClientKeys.environment, environment) },
    CLIENT_KEYS_MAX,
  );
  if (!stored) throw ApiError.validation({ environment: [`has ${CLIENT_KEYS_MAX} client keys already`] });
  unknown.clear();
  return { ...view(row), key };
}

export async function deleteClientKey(env: Env, teamId: string, environment: string, id: string): Promise<void> {
  const deleted = await getDb(env.DB)
    .delete(flagClientKeys)
    .where(and(ownedRow(flagClientKeys, teamId, uuidOr404(id, notFound)), eq(flagClientKeys.environment, environment)))
    .returning({ id: flagClientKeys.id });
  orNotFound(deleted[0], notFound);
  forgetClientKey(id);
}

const known = new IsolateCache<ClientPrincipal>({ ttlMs: CLIENT_KEY_TTL_MS, max: 5_000, teamOf: (p) => p.teamId });
const unknown = new IsolateCache<true>({ ttlMs: CLIENT_KEY_TTL_MS, max: 1_000 });

/** A client key deleted through this isolate is refused here from now on. */
export function forgetClientKey(id: string): void {
  known.forget((p) => p.keyId === id);
}

/** The principal of a plaintext client key, from this isolate within CLIENT_KEY_TTL_MS, else D1; null when unknown. */
export async function resolveClientKey(env: Env, token: string): Promise<ClientPrincipal | null> {
  if (!CLIENT_KEY_FORMAT.test(token)) return null;
  const cached = known.get(token);
  if (cached) return cached;
  if (unknown.get(token)) return null;
  const marks = { known: known.mark(), unknown: unknown.mark() };
  const [row] = await getDb(env.DB)
    .select({
      keyId: flagClientKeys.id,
      teamId: flagClientKeys.teamId,
      environment: flagClientKeys.environment,
      allowedOrigins: flagClientKeys.allowedOrigins,
      plan: teams.plan,
      ownerEmail: teams.ownerEmail,
    })
    .from(flagClientKeys)
    .innerJoin(teams, eq(teams.id, flagClientKeys.teamId))
    .where(eq(flagClientKeys.keyHash, await sha256Hex(token)))
    .limit(1);
  if (row) known.set(token, row, marks.known);
  else unknown.set(token, true, marks.unknown);
  return row ?? null;
}
