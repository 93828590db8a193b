// Sending domains (docs/ARCHITECTURE.md "Sending domains"): a live key may send only from a domain verified
// for its team. A team adds a domain and gets a TXT record to publish; verification looks the
// record up over DNS-over-HTTPS (the JSON API at DNS_RESOLVER_URL); the operator may verify a
// domain for a team directly. The platform's own sender domain and the sandbox domain are never a
// team's. Several teams may verify the same domain, each with its own record. Services take
// `(env, teamId, ...)` and open the database with getDb(env.DB) themselves.
import { settings } from "../../platform/config";
import { log } from "../../platform/log";
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb, type Db } from "../../db/client";
import { sendingDomains, type SendingDomainRow } from "../../db/schema";
import { insertUnderCap } from "../../platform/caps";
import { nowIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { readCapped } from "../../platform/outbound";
import { ownedBy, ownedRow, orNotFound } from "../../platform/tenancy";

/** Domains per team (checked and written in one statement). */
export const MAX_DOMAINS = 50;
/** Seconds a DNS-over-HTTPS look-up may take. */
export const DNS_TIMEOUT_MS = 5_000;
export const RECORD_PREFIX = "_edge-platform.";
export const TOKEN_PREFIX = "edp-verify=";

export const domainNotFound = () => ApiError.notFound("Domain not found");

export function domainView(row: SendingDomainRow) {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    records: [{ type: "TXT" as const, name: `${RECORD_PREFIX}${row.name}`, value: `${TOKEN_PREFIX}${row.token}` }],
    created_at: row.createdAt,
    verified_at: row.verifiedAt,
  };
}

/** The domain of an address or `Name <address>` string (lower-cased), or null. */
function domainOfSender(value: string | undefined): string | null {
  const match = /@([^@\s>]+)>?\s*$/.exec(value ?? "");
  return match ? match[1].toLowerCase().replace(/\.+$/, "") : null;
}

/** The domains no team may add: the platform's own sender's and the sandbox's, and their subdomains. */
function reservedDomains(env: Env): string[] {
  const { mailFrom, sandboxDomain } = settings(env);
  return [domainOfSender(mailFrom), sandboxDomain].filter((d): d is string => !!d);
}

/**
 * Validates and normalises a domain name: lower case, no trailing dot, 2+ labels of letters,
 * digits and hyphens (punycode for IDNs), at most 253 characters, not an IP address.
 */
export function normaliseDomain(env: Env, raw: unknown): string {
  const name = typeof raw === "string" ? raw.trim().toLowerCase().replace(/\.$/, "") : "";
  const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
  const labels = name.split(".");
  if (!name || name.length > 253 || labels.length < 2 || !labels.every((l) => label.test(l)) || /^[0-9]+$/.test(labels[labels.length - 1])) {
    throw ApiError.validation({ name: ["must be a domain name such as example.com"] });
  }
  if (reservedDomains(env).some((reserved) => name === reserved || name.endsWith(`.${reserved}`))) {
    throw ApiError.validation({ name: ["is reserved by the platform and cannot be added"] });
  }
  return name;
}

function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Adds a domain for a team, `pending` (or `verified` when the operator adds it). */
export async function addDomain(env: Env, teamId: string, rawName: unknown, status: "pending" | "verified" = "pending"): Promise<SendingDomainRow> {
  const name = normaliseDomain(env, rawName);
  const db = getDb(env.DB);
  const [existing] = await db
    .select()
    .from(sendingDomains)
    .where(and(ownedBy(sendingDomains, teamId), eq(sendingDomains.name, name)))
    .limit(1);
  if (existing) {
    if (status === "verified" && existing.status !== "verified") return markVerified(db, existing);
    if (status === "verified") return existing;
    throw ApiError.validation({ name: ["has already been added"] });
  }
  const at = nowIso();
  const row: SendingDomainRow = {
    id: crypto.randomUUID(),
    teamId,
    name,
    status,
    token: newToken(),
    createdAt: at,
    verifiedAt: status === "verified" ? at : null,
  };
  let inserted: boolean;
  try {
    inserted = await insertUnderCap(db, sendingDomains, row, { column: sendingDomains.teamId, value: teamId }, MAX_DOMAINS);
  } catch (error) {
    // A parallel add of the same name won the unique index.
    if (String(error).includes("UNIQUE")) throw ApiError.validation({ name: ["has already been added"] });
    throw error;
  }
  if (!inserted) throw ApiError.validation({ name: [`a team can have at most ${MAX_DOMAINS} domains`] });
  return row;
}

async function markVerified(db: Db, row: SendingDomainRow): Promise<SendingDomainRow> {
  const at = nowIso();
  await db.update(sendingDomains).set({ status: "verified", verifiedAt: at }).where(eq(sendingDomains.id, row.id));
  return { ...row, status: "verified", verifiedAt: at };
}

export async function listDomains(env: Env, teamId: string): Promise<SendingDomainRow[]> {
  return getDb(env.DB).select().from(sendingDomains).where(ownedBy(sendingDomains, teamId)).orderBy(desc(sendingDomains.createdAt)).limit(MAX_DOMAINS);
}

export async function getDomain(env: Env, teamId: string, id: string): Promise<SendingDomainRow> {
  const [row] = await getDb(env.DB)
    .select()
    .from(sendingDomains)
    .where(ownedRow(sendingDomains, teamId, id))
    .limit(1);
  return orNotFound(row, domainNotFound);
}

export async function deleteDomain(env: Env, teamId: string, id: string): Promise<void> {
  const deleted = await getDb(env.DB)
    .delete(sendingDomains)
    .where(ownedRow(sendingDomains, teamId, id))
    .returning({ id: sendingDomains.id });
  orNotFound(deleted[0], domainNotFound);
}

/** TXT values found at a name over DNS-over-HTTPS (JSON API); throws 503 when the resolver fails. */
export async function lookupTxt(env: Env, name: string): Promise<string[]> {
  const url = new URL(settings(env).dnsResolverUrl);
  url.searchParams.set("name", name);
  url.searchParams.set("type", "TXT");
  let answer: { Status?: number; Answer?: Array<{ type?: number; data?: string }> };
  try {
    const response = await fetch(url, { headers: { accept: "application/dns-json" }, signal: AbortSignal.timeout(DNS_TIMEOUT_MS), redirect: "manual" });
    if (!response.ok) throw new Error(`resolver answered HTTP ${response.status}`);
    answer = JSON.parse(await readCapped(response));
  } catch (error) {
    log.error("DNS-over-HTTPS look-up failed", { name, error: String(error) });
    throw new ApiError("unavailable", "The DNS resolver could not be reached; try again later");
  }
  // TXT data comes quoted, long records split into several quoted strings.
  return (answer.Answer ?? [])
    .filter((record) => record.type === undefined || record.type === 16)
    .map((record) => (record.data ?? "").replace(/"\s*"/g, "").replace(/^"|"$/g, ""))
    .slice(0, 50);
}

/** Looks the domain's TXT record up; verified when it holds this team's token, else 422 with what was found. */
export async function verifyDomain(env: Env, teamId: string, id: string): Promise<SendingDomainRow> {
  const row = await getDomain(env, teamId, id);
  if (row.status === "verified") return row;
  const found = await lookupTxt(env, `${RECORD_PREFIX}${row.name}`);
  if (!found.includes(`${TOKEN_PREFIX}${row.token}`)) {
    throw ApiError.validation({
      records: found.length
        ? [`TXT ${RECORD_PREFIX}${row.name} does not hold ${TOKEN_PREFIX}${row.token}; found: ${found.map((v) => JSON.stringify(v.slice(0, 200))).join(", ")}`]
        : [`no TXT record found at ${RECORD_PREFIX}${row.name}`],
    });
  }
  return markVerified(getDb(env.DB), row);
}

/** Of these sender addresses, the first (0-based) whose domain is not verified for the team, or -1. */
export async function firstUnverifiedSender(env: Env, teamId: string, senders: string[]): Promise<number> {
  const domains = senders.map(domainOfSender);
  const wanted = [...new Set(domains.filter((d): d is string => !!d))];
  const verified = wanted.length
    ? new Set(
        (
          await getDb(env.DB)
            .select({ name: sendingDomains.name })
            .from(sendingDomains)
            .where(and(ownedBy(sendingDomains, teamId), eq(sendingDomains.status, "verified"), inArray(sendingDomains.name, wanted)))
        ).map((r) => r.name),
      )
    : new Set<string>();
  return domains.findIndex((domain) => !domain || !verified.has(domain));
}
