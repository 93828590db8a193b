// The plan table: API rate per second (the default rate-limit bucket is rate × 60 per minute) and
// the monthly ceiling of each metered service. null means unlimited / not rate limited. The
// services and their limits per plan are the products' (their definitions' `services`); products
// add their service names to the `Service` type by augmenting `ProductServices`.
import { catalog, type Catalog, type ServiceDeclaration } from "./products";

export const PLANS = ["free", "starter", "pro", "scale", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

/**
 * Metered service names products declare, as keys (values unused): `mail: true`. Each product adds
 * its own with `declare module "../../platform/plans" { interface ProductServices { ... } }`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the products' module augmentations.
export interface ProductServices {}

export type Service = keyof ProductServices & string;

/** The API rate of each plan (requests per second); the monthly limits are the services'. */
const RATE_PER_SECOND: Record<Plan, number | null> = {
  free: 10,
  starter: 50,
  pro: 100,
  scale: 500,
  enterprise: null,
};

/** Every metered service, in list order. */
export function services(): readonly Service[] {
  return [...catalog().services.keys()];
}

/** A service's declaration (metric, labels, limits, who sees it); throws for a name no product declares. */
export function serviceOf(service: Service): ServiceDeclaration {
  const declared = catalog().services.get(service);
  if (!declared) throw new Error(`no product declares the metered service ${service}`);
  return declared;
}

/** The metric each service is counted in, as reported by GET /usage. */
export function serviceMetric(service: Service): string {
  return serviceOf(service).metric;
}

export interface PlanLimits {
  ratePerSecond: number | null;
  monthly: Record<Service, number | null>;
}

/** Each catalog's plan table, built on first use. */
const tables = new WeakMap<Catalog, Record<Plan, PlanLimits>>();

/** The limits of every plan, from the registered services. */
export function planTable(): Record<Plan, PlanLimits> {
  const current = catalog();
  let table = tables.get(current);
  if (!table) {
    table = {} as Record<Plan, PlanLimits>;
    for (const plan of PLANS) {
      const monthly = {} as Record<Service, number | null>;
      for (const [service, declared] of current.services) monthly[service] = declared.limits[plan];
      table[plan] = { ratePerSecond: RATE_PER_SECOND[plan], monthly };
    }
    tables.set(current, table);
  }
  return table;
}

/** Limits of a plan name; an unknown name falls back to free rather than to unlimited. */
export function planLimits(plan: string): PlanLimits {
  return planTable()[(PLANS as readonly string[]).includes(plan) ? (plan as Plan) : "free"];
}
