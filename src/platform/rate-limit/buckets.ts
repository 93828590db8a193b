// The rate-limit buckets of the specification (Limits): their limits and what they are keyed on.
// The platform's buckets are here; a product's own buckets and strict families are declared in its
// definition (`rateLimits`), their names added to the types by augmenting `ProductBuckets` and
// `ProductStrictFamilies` beside it.
import { planLimits } from "../plans";
import { catalog } from "../products";

export const WINDOW_SECONDS = 60;

/** A UTC day, the other window a network's cap may count in (NETWORK_DAY_PREFIX). */
export const DAY_SECONDS = 86_400;

/** A bucket object's own counter (the bucket it is named after). */
export const OWN_COUNTER = "";

/**
 * How a client network's key and counter begin (`ip:<clientNetwork>`): the middleware puts such a
 * counter in its routed block's object, and that object drops all of them together at each new window.
 */
export const NETWORK_PREFIX = "ip:";

/**
 * How a client network's counters of a UTC day begin (`ipday:<clientNetwork>:…`, a public route's
 * daily cap per network): they live in the same block object, which drops all of them together at
 * each new day.
 */
export const NETWORK_DAY_PREFIX = "ipday:";

/** One counter to count a request in, with the limit that refuses it. */
export interface CounterSpec {
  /** OWN_COUNTER, or a named counter kept in the same object (e.g. `strict:push_subscribers`). */
  name: string;
  limit: number;
  /** Length of the counter's fixed windows, a multiple of WINDOW_SECONDS (its default); the console's sign-in links per address count per hour. */
  windowSeconds?: number;
}

/** Bucket names products declare (`log_ingest: true`), added by module augmentation. */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the products' module augmentations.
export interface ProductBuckets {}
export type ProductBucket = keyof ProductBuckets & string;

export type BucketName = "default" | "strict" | "public" | "anonymous" | ProductBucket;

/**
 * The endpoint families of the `strict` bucket (docs/ARCHITECTURE.md, "Strict bucket per endpoint family"):
 * each family of a team has its own counter, so anonymous traffic on one family (say, survey starts
 * from many IPs) never locks the team out of another (its push subscriber registration or report
 * shares). Audit scan runs share `audit_share` with report shares, as the spec says.
 */
export type StrictFamily = keyof ProductStrictFamilies & string;

/** Strict families products declare (`survey_start: true`), added by module augmentation. */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the products' module augmentations.
export interface ProductStrictFamilies {}

/** The object of a team (its default bucket, strict families and meter): named after its default bucket's key, the name it has always had. */
export function teamObject(teamId: string): string {
  return `default:team:${teamId}`;
}

/** The platform's fixed limits per 60-second window; `default` follows the plan, a product's buckets are its definition's. */
export const PLATFORM_BUCKET_LIMITS = {
  strict: 30,
  public: 200,
  anonymous: 100,
} as const;

/** The fixed limit of a bucket other than `default` per 60-second window. */
export function fixedLimit(bucket: Exclude<BucketName, "default">): number {
  if (Object.hasOwn(PLATFORM_BUCKET_LIMITS, bucket)) return PLATFORM_BUCKET_LIMITS[bucket as keyof typeof PLATFORM_BUCKET_LIMITS];
  const limit = catalog().buckets.get(bucket);
  if (limit === undefined) throw new Error(`no product declares the rate-limit bucket ${bucket}`);
  if (limit === "plan") throw new Error(`the rate-limit bucket ${bucket} follows the plan: ask bucketLimit with the plan`);
  return limit;
}

/** Limit of a bucket for a plan; null when the plan is not rate limited (enterprise). */
export function bucketLimit(bucket: BucketName, plan?: string): number | null {
  // `default`, and a product's bucket declared `"plan"` (keyed on its own credential), follow the plan's API rate.
  if (bucket === "default" || catalog().buckets.get(bucket) === "plan") {
    const rate = planLimits(plan ?? "free").ratePerSecond;
    return rate === null ? null : rate * WINDOW_SECONDS;
  }
  return fixedLimit(bucket);
}
