// The rate-limit buckets of the specification (Limits): their limits and what they are keyed on.
import { planLimits } from "../plans";

export const WINDOW_SECONDS = 60;

/** A bucket object's own counter (the bucket it is named after). */
export const OWN_COUNTER = "";

/** One counter to count a request in, with the limit that refuses it. */
export interface CounterSpec {
  /** OWN_COUNTER, or a named counter kept in the same object (e.g. `strict:push_subscribers`). */
  name: string;
  limit: number;
  /** Length of the counter's fixed windows, a multiple of WINDOW_SECONDS (its default); the console's sign-in links per address count per hour. */
  windowSeconds?: number;
}

export type BucketName = "default" | "strict" | "public" | "log_ingest" | "anonymous" | "survey_start_ip";

/**
 * The endpoint families of the `strict` bucket (docs/ARCHITECTURE.md, "Strict bucket per endpoint family"):
 * each family of a team has its own counter, so anonymous traffic on one family (say, survey starts
 * from many IPs) never locks the team out of another (its push subscriber registration or report
 * shares). Audit scan runs share `audit_share` with report shares, as the spec says.
 */
export type StrictFamily = "survey_start" | "push_subscribers" | "audit_share";

/** The object of a team (its default bucket, strict families and meter): named after its default bucket's key, the name it has always had. */
export function teamObject(teamId: string): string {
  return `default:team:${teamId}`;
}

/** Fixed limits per 60-second window; `default` follows the plan. */
export const BUCKET_LIMITS: Record<Exclude<BucketName, "default">, number> = {
  strict: 30,
  public: 200,
  log_ingest: 300,
  anonymous: 100,
  /**
   * Survey starts of one team from one client network (docs/ARCHITECTURE.md "Survey starts"): at most 10 of
   * the team's 30 `survey_start` per window, so one machine cannot lock the team's surveys. An
   * extension of the specification's buckets, counted before the team's strict family.
   */
  survey_start_ip: 10,
};

/** Limit of a bucket for a plan; null when the plan is not rate limited (enterprise). */
export function bucketLimit(bucket: BucketName, plan?: string): number | null {
  if (bucket === "default") {
    const rate = planLimits(plan ?? "free").ratePerSecond;
    return rate === null ? null : rate * WINDOW_SECONDS;
  }
  return BUCKET_LIMITS[bucket];
}
