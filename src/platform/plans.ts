// The plan table: API rate per second (the default rate-limit bucket is rate × 60 per minute) and
// the monthly ceiling of each metered service. null means unlimited / not rate limited.

export const PLANS = ["free", "starter", "pro", "scale", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

export const SERVICES = ["mail", "ai", "surveys", "push", "webhooks", "logs", "flags"] as const;
export type Service = (typeof SERVICES)[number];

/** The metric each service is counted in, as reported by GET /usage. */
export const SERVICE_METRIC: Record<Service, string> = {
  mail: "emails_sent",
  ai: "ai_units",
  surveys: "responses",
  push: "notifications_sent",
  webhooks: "events_received",
  logs: "ingested_mb",
  flags: "evaluations",
};

export interface PlanLimits {
  ratePerSecond: number | null;
  monthly: Record<Service, number | null>;
}

export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  free: {
    ratePerSecond: 10,
    monthly: { mail: 3_000, ai: 10, surveys: 1_000, push: 10_000, webhooks: 10_000, logs: 1_024, flags: 100_000 },
  },
  starter: {
    ratePerSecond: 50,
    monthly: { mail: 50_000, ai: 100, surveys: 10_000, push: 100_000, webhooks: 100_000, logs: 10_240, flags: 1_000_000 },
  },
  pro: {
    ratePerSecond: 100,
    monthly: { mail: 250_000, ai: 500, surveys: 50_000, push: 1_000_000, webhooks: 1_000_000, logs: 51_200, flags: 10_000_000 },
  },
  scale: {
    ratePerSecond: 500,
    monthly: { mail: 1_000_000, ai: 2_500, surveys: 250_000, push: 10_000_000, webhooks: 10_000_000, logs: 512_000, flags: 100_000_000 },
  },
  enterprise: {
    ratePerSecond: null,
    monthly: { mail: null, ai: null, surveys: null, push: null, webhooks: null, logs: null, flags: null },
  },
};

/** Limits of a plan name; an unknown name falls back to free rather than to unlimited. */
export function planLimits(plan: string): PlanLimits {
  return PLAN_LIMITS[(PLANS as readonly string[]).includes(plan) ? (plan as Plan) : "free"];
}
