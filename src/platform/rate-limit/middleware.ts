// Rate-limit middleware: a route names its bucket, the middleware counts the request in that
// bucket's Durable Object and refuses with the spec's 429 when the window is full. The result is
// kept on the context; the root middleware writes the x-ratelimit-* headers on every response, so
// the last bucket evaluated is the one the headers show (strict overwrites default).
//
// One RPC per request: a team's strict families live in the team's own object next to its default
// counter, and auth() counts the default bucket and the strict family its route declares
// (platform/route-access.ts) in one `hitAll`. The strict middleware then finds its result on the
// context instead of calling the object again. That one item rides a call shared with the
// object's other requests in flight on this isolate (limiter.ts MeterClient); GET /usage reads the
// team's usage in the same item (auth's readsUsage).
import ipaddr from "ipaddr.js";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import { ApiError } from "../errors";
import { bucketLimit, fixedLimit, teamObject, type BucketName, type StrictFamily } from "./buckets";
import { DAY_SECONDS, NETWORK_DAY_PREFIX, NETWORK_PREFIX, OWN_COUNTER, type CounterSpec } from "./buckets";
import { getLimiter, type RateLimitResult, type ReadUsageReply } from "./limiter";
import { keepAliveOf } from "../jobs/commit";

declare module "hono" {
  interface ContextVariableMap {
    rateLimit?: RateLimitResult;
    /** Results counted ahead by auth() for strict middleware further down, by counter address. */
    rateLimitCounted?: Map<string, RateLimitResult>;
    /** The team's usage, read by auth({ readsUsage: true }) in the same meter call as its count; null when not read. */
    usageRead?: Promise<ReadUsageReply | null>;
  }
}

/** The client IP as Cloudflare reports it; never a caller-controlled forwarding header. */
export function clientIp(c: Context): string {
  return c.req.header("cf-connecting-ip") ?? "unknown";
}

/**
 * The network a client IP counts for in every per-IP bucket: the address itself for IPv4 (and an
 * IPv4-mapped IPv6 address), its /64 for IPv6 (one machine or subscriber usually holds a whole
 * /64, so counting single IPv6 addresses would give it billions of windows).
 */
export function clientNetwork(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.parse(ip);
  if (address.kind() === "ipv4") return address.toString();
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(":")}::/64`;
}

/** The key of the caller's per-IP bucket: `ip:<clientNetwork>`. Every per-IP bucket uses it. */
export function ipKey(c: Context): string {
  return `${NETWORK_PREFIX}${clientNetwork(clientIp(c))}`;
}

/** A team's counter in one `strict` family (docs/ARCHITECTURE.md, "Strict bucket per endpoint family"). */
export interface StrictKey {
  teamId: string;
  family: StrictFamily;
}

/** The key of a team's counter in one `strict` family. */
export function strictKey(teamId: string, family: StrictFamily): StrictKey {
  return { teamId, family };
}

export { teamObject };

/** The counter name of a strict family inside its team's object. */
export function strictCounter(family: StrictFamily): string {
  return `strict:${family}`;
}

/**
 * The routed block of a client network: its IPv4 /24 or IPv6 /48, the longest prefixes routed
 * between networks on the Internet, so a block's addresses belong to one network and reach the edge
 * in one region, as one address does; null for anything else (`unknown`).
 */
export function routedBlock(network: string): string | null {
  const bare = network.replace(/\/64$/, "");
  if (!ipaddr.isValid(bare)) return null;
  const address = ipaddr.parse(bare);
  if (address.kind() === "ipv4") return `${(address as ipaddr.IPv4).octets.slice(0, 3).join(".")}.0/24`;
  return `${(address as ipaddr.IPv6).parts
    .slice(0, 3)
    .map((part) => part.toString(16))
    .join(":")}::/48`;
}

/**
 * Where a counter lives: the object and its name there. A team's strict family is a counter of the
 * team's object; a per-IP bucket's count (`ip:<clientNetwork>`) is a counter of its own, named after
 * the network, in the object of the network's routed block (`<bucket>:block:<block>`): every address
 * keeps its exact count, and the addresses of one block share an object (one object born, stored
 * and kept alive for all of them, one coalesced call per isolate). Any other key is its own object.
 */
export function counterAddress(bucket: BucketName, key: string | StrictKey): { object: string; counter: string } {
  if (typeof key !== "string") return { object: teamObject(key.teamId), counter: strictCounter(key.family) };
  const block = key.startsWith(NETWORK_PREFIX) ? routedBlock(key.slice(NETWORK_PREFIX.length)) : null;
  if (block) return { object: `${bucket}:block:${block}`, counter: key };
  return { object: `${bucket}:${key}`, counter: OWN_COUNTER };
}

const addressKey = (a: { object: string; counter: string }) => `${a.object}\u0000${a.counter}`;

/**
 * A public route's cap for the caller's network on one resource (`name`: `form:<id>`), per minute
 * (default) or per UTC day. countBeside counts it after the network's per-IP bucket in the same call
 * to the block's object, as a counter named after the network (`ip:<network>:<name>` for a minute,
 * `ipday:<network>:<name>` for a day), so the object drops it with the network's other counters.
 */
export interface NetworkCap {
  name: string;
  limit: number;
  /** A UTC day's window; a minute's when absent. */
  windowSeconds?: typeof DAY_SECONDS;
}

/** The counter of a network's cap, beside the network's own (`key`: ipKey). */
function networkCounter(key: string, cap: NetworkCap): CounterSpec {
  const network = key.startsWith(NETWORK_PREFIX) ? key.slice(NETWORK_PREFIX.length) : key;
  return cap.windowSeconds === DAY_SECONDS
    ? { name: `${NETWORK_DAY_PREFIX}${network}:${cap.name}`, limit: cap.limit, windowSeconds: DAY_SECONDS }
    : { name: `${NETWORK_PREFIX}${network}:${cap.name}`, limit: cap.limit };
}

/** Counts a public request once in its per-IP bucket, with the caps of the resource it is for (countBeside, bound to the request). */
export type CountNetwork = (caps?: NetworkCap[]) => Admission;

/**
 * Counts the request in `bucket` under `key` and throws the 429 when the bucket is full.
 * A null limit (enterprise) makes no Durable Object call at all. `caps`, a per-IP bucket's only,
 * are counted after the bucket in the same call; the first that refuses throws its 429 (the headers
 * still show the bucket).
 */
export async function enforceBucket(c: Context<AppEnv>, bucket: "strict", key: StrictKey): Promise<void>;
export async function enforceBucket(c: Context<AppEnv>, bucket: BucketName, key: string, plan?: string, caps?: NetworkCap[]): Promise<void>;
export async function enforceBucket(c: Context<AppEnv>, bucket: BucketName, key: string | StrictKey, plan?: string, caps: NetworkCap[] = []): Promise<void> {
  const { own, capped } = await countBucket(c, bucket, key, plan, caps);
  admit(c, own);
  if (capped) throw ApiError.rateLimited(capped.retryAfter);
}

/** Keeps a bucket's result for the headers and throws its 429 when it refused; nothing when it was not counted (no limit). */
function admit(c: Context<AppEnv>, result: RateLimitResult | null): void {
  if (!result) return;
  c.set("rateLimit", result);
  if (!result.allowed) throw ApiError.rateLimited(result.retryAfter);
}

/**
 * Counts the request in `bucket` under `key` (or takes auth()'s count made ahead), and in the same
 * call in the network's `caps` (a per-IP key's only): `own` is the bucket's result (null when it
 * has no limit), `capped` the first cap that refused (null when none did, or none was reached).
 */
async function countBucket(
  c: Context<AppEnv>,
  bucket: BucketName,
  key: string | StrictKey,
  plan?: string,
  caps: NetworkCap[] = [],
): Promise<{ own: RateLimitResult | null; capped: RateLimitResult | null }> {
  const limit = bucketLimit(bucket, plan);
  const capCounters = typeof key === "string" ? caps.map((cap) => networkCounter(key, cap)) : [];
  if (limit === null && capCounters.length === 0) return { own: null, capped: null };
  const where = counterAddress(bucket, key);
  const counted = c.get("rateLimitCounted");
  const ahead = counted?.get(addressKey(where));
  if (ahead) {
    counted!.delete(addressKey(where));
    return { own: ahead, capped: null };
  }
  const counters = limit === null ? capCounters : [{ name: where.counter, limit }, ...capCounters];
  const results = await getLimiter(c.env).hitAll(where.object, counters, keepAliveOf(c));
  const own = limit === null ? null : results.shift()!;
  return { own, capped: results.find((result) => !result.allowed) ?? null };
}

/** A per-key bucket's count begun beside a route's own work (countBeside): its refusal, or null. */
export type Admission = Promise<unknown>;

/**
 * Begins counting the request in the per-key bucket `bucket` (refused at once, with no call, when
 * this isolate remembers the window full) and answers its refusal, or null, as a promise that never
 * rejects: the route runs its independent work beside the count and awaits it before anything it
 * cannot undo, so a refusal still comes first (`(await admitted) ?? error` where the route fails on
 * its own; `besideCount` for work that takes something). `caps` are the caller's network's caps
 * on the resource, counted in the same call after the bucket (NetworkCap).
 */
export function countBeside(
  c: Context<AppEnv>,
  bucket: Exclude<BucketName, "default" | "strict" | "flags_client">,
  key: string,
  caps?: NetworkCap[],
): Admission {
  refuseRemembered(c, bucket, key);
  return enforceBucket(c, bucket, key, undefined, caps).then(
    () => null,
    (refusal: unknown) => refusal,
  );
}

/**
 * `work` (begun already) beside the count `admitted`, one round trip for both: a refusal of the
 * count comes first, and what the work took is handed to `undo` (units given back) before the
 * refusal is thrown; else the work's own error, or its value. Whatever the work counted besides (a
 * flags client key's bucket) stays counted for a request the bucket refused, at most once per
 * window and isolate: from then on the refusal is remembered and nothing is asked.
 */
export async function besideCount<T>(admitted: Admission, work: Promise<T>, undo: (taken: T) => Promise<unknown>): Promise<T> {
  const [refusal, outcome] = await Promise.all([
    admitted,
    work.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    ),
  ]);
  if (refusal) {
    if (outcome.ok) await undo(outcome.value).catch(() => undefined);
    throw refusal;
  }
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/**
 * The client key's bucket (`flags_client`, the key's plan) counted beside the client network's
 * (`admitted`): the network's refusal first, then the key's; the headers show the key's.
 */
export async function enforceBesideCount(c: Context<AppEnv>, admitted: Admission, bucket: "flags_client", key: string, plan: string): Promise<void> {
  admit(c, (await besideCount(admitted, countBucket(c, bucket, key, plan), async () => undefined)).own);
}

/**
 * Counts an authenticated request in its team's default bucket and, with the same RPC, in the
 * strict families `families` (counted ahead for the strict middleware the route declares), and
 * with `readsUsage` reads the team's usage in that call too (`usageRead` on the context).
 * Throws the 429 when the default bucket is full; strict refusals are thrown by their middleware.
 */
export async function enforceTeamBuckets(c: Context<AppEnv>, teamId: string, plan: string, families: StrictFamily[], readsUsage = false): Promise<void> {
  const defaultLimit = bucketLimit("default", plan);
  const counters: CounterSpec[] = [];
  if (defaultLimit !== null) counters.push({ name: OWN_COUNTER, limit: defaultLimit });
  for (const family of families) counters.push({ name: strictCounter(family), limit: fixedLimit("strict") });
  if (counters.length === 0) return;
  let results: RateLimitResult[];
  if (readsUsage) {
    let readUsage!: (reply: ReadUsageReply | null) => void;
    c.set("usageRead", new Promise<ReadUsageReply | null>((resolve) => (readUsage = resolve)));
    const counted = await getLimiter(c.env)
      .hitAllReading(teamId, counters, keepAliveOf(c))
      .catch((error: unknown) => {
        readUsage(null);
        throw error;
      });
    readUsage(counted.usage);
    results = counted.results;
  } else {
    results = await getLimiter(c.env).hitAll(teamObject(teamId), counters, keepAliveOf(c));
  }
  let i = 0;
  if (defaultLimit !== null) {
    const result = results[i++];
    c.set("rateLimit", result);
    if (!result.allowed) throw ApiError.rateLimited(result.retryAfter);
  }
  if (i < results.length) {
    const counted = c.get("rateLimitCounted") ?? new Map<string, RateLimitResult>();
    for (; i < results.length; i++) {
      const family = families[i - (defaultLimit !== null ? 1 : 0)];
      counted.set(addressKey({ object: teamObject(teamId), counter: strictCounter(family) }), results[i]);
    }
    c.set("rateLimitCounted", counted);
  }
}

/**
 * Throws the 429 of a per-key bucket (`public`, `anonymous`, …) when this isolate remembers its
 * window full, with no call: lets a route start its work beside the count only when no refusal is
 * known (relay ingest).
 */
export function refuseRemembered(c: Context<AppEnv>, bucket: Exclude<BucketName, "default" | "strict" | "flags_client">, key: string): void {
  const where = counterAddress(bucket, key);
  const result = getLimiter(c.env).remembered(where.object, { name: where.counter, limit: fixedLimit(bucket) });
  if (!result) return;
  c.set("rateLimit", result);
  throw ApiError.rateLimited(result.retryAfter);
}

/**
 * Throws the 429 of a team's default bucket when this isolate remembers its window full, with no
 * call: lets a read start its route beside the counter call only when no refusal is known.
 */
export function refuseRememberedTeam(c: Context<AppEnv>, teamId: string, plan: string): void {
  const limit = bucketLimit("default", plan);
  if (limit === null) return;
  const result = getLimiter(c.env).remembered(teamObject(teamId), { name: OWN_COUNTER, limit });
  if (!result) return;
  c.set("rateLimit", result);
  throw ApiError.rateLimited(result.retryAfter);
}

export type RateLimitOptions =
  /** `strict` is counted per team and endpoint family. */
  | { bucket: "strict"; family: StrictFamily }
  /** Other buckets: keyed on the caller's team for `default`, else on the client IP. */
  | { bucket: Exclude<BucketName, "strict"> };

/** Adds a bucket to a route: `rateLimit({ bucket: "strict", family: "push_subscribers" })`. */
export function rateLimit(options: RateLimitOptions): MiddlewareHandler<AppEnv> {
  return async function rateLimitMiddleware(c, next) {
    const principal = c.get("principal");
    if (options.bucket === "strict" && principal) {
      await enforceBucket(c, "strict", strictKey(principal.teamId, options.family));
    } else {
      const key = principal && options.bucket === "default" ? `team:${principal.teamId}` : ipKey(c);
      await enforceBucket(c, options.bucket, key, principal?.plan);
    }
    await next();
  };
}

/** Writes the headers of the last evaluated bucket onto a response. */
export function rateLimitHeaders(result: RateLimitResult): Record<string, string> {
  return {
    "x-ratelimit-limit": String(result.limit),
    "x-ratelimit-remaining": String(result.remaining),
    "x-ratelimit-reset": String(result.reset),
  };
}
