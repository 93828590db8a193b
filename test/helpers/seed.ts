// Teams (with their owner's membership), keys and verified sending domains written straight into D1, in one batch, for the tests
// whose subject is not the operator API: the rows are those the operator routes write
// (src/platform/admin/admin.service.ts createTeam/createKey, domains.service.ts addDomain with
// "verified"), built from the same constants, without three HTTP round trips per team. The
// operator routes themselves are tested through HTTP in test/platform/admin.test.ts and
// test/products/mail/domains.test.ts.
import { env } from "cloudflare:test";
import { getDb } from "../../src/db/client";
import { apiKeys, sendingDomains, teams, type MailKeyPolicy } from "../../src/db/schema";
import { newKey, ownerStatements } from "../../src/platform/admin/admin.service";
import { nowIso } from "../../src/platform/clock";
import { randomToken } from "../../src/platform/crypto";
import type { Plan } from "../../src/platform/plans";

export interface SeedTeamOptions {
  name: string;
  plan: Plan;
  ownerEmail: string | null;
  scopes: string[];
  mail?: Partial<MailKeyPolicy>;
  /** Sending domains the team has verified (lower-case names, as addDomain stores them). */
  domains: string[];
}

/** Writes a team, one key and its verified domains in one D1 batch; returns the plaintext key. */
export async function seedTeam(options: SeedTeamOptions): Promise<{ teamId: string; key: string; keyId: string }> {
  const db = getDb(env.DB);
  const at = nowIso();
  const teamId = crypto.randomUUID();
  const { values: keyRow, key } = await newKey(teamId, { name: "test key", scopes: options.scopes, mail: options.mail });
  const domainRows = options.domains.map((name) => ({
    id: crypto.randomUUID(),
    teamId,
    name,
    status: "verified" as const,
    token: randomToken(16),
    createdAt: at,
    verifiedAt: at,
  }));
  await db.batch([
    db.insert(teams).values({ id: teamId, name: options.name, plan: options.plan, ownerEmail: options.ownerEmail, createdAt: at, updatedAt: at }),
    db.insert(apiKeys).values(keyRow),
    ...(options.ownerEmail ? ownerStatements(db, teamId, options.ownerEmail, at) : []),
    ...(domainRows.length ? [db.insert(sendingDomains).values(domainRows)] : []),
  ]);
  return { teamId, key, keyId: keyRow.id };
}
