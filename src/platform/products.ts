// What a product declares about itself, once, in its folder's index.ts (`defineProduct`), and the
// catalog of the products the Worker serves. src/products/index.ts is the one list: it registers
// the definitions here (`registerProducts`), and the entry (src/index.ts), the app (src/app.ts), the
// operator API, the console shell, GET /usage, the scope picker, the quota and the rate limiter read
// them from the catalog. The platform imports no product: it serves what the list registered.
//
// The names a product adds to the platform's types (its scopes, usage services, strict families,
// rate-limit buckets, queue bindings) are added by module augmentation in the product's index.ts,
// beside the definition that declares them at run time (docs/ARCHITECTURE.md "Adding a product").
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Hono } from "hono";
import type { AppEnv } from "../env";
import type { Role } from "../db/schema";
import type { Consumer } from "./jobs/consume";
import type { CronJob } from "./jobs/cron";
import type { QueueDeclaration } from "./jobs/queues";
import type { Plan, Service } from "./plans";
import type { ProductBucket, StrictFamily } from "./rate-limit/buckets";
import type { Scope } from "./scopes";

/** A router and where the app mounts it (a path prefix without trailing slash, "" for the root). */
export interface ProductMount {
  prefix: string;
  router: Hono<AppEnv>;
}

/** A console page group and its entry in the console's navigation. */
export interface ProductConsole {
  /** Mounted at /console/teams/:team_id behind the session and the team's membership. */
  pages: Hono<AppEnv>;
  /** The sidebar entry; the products' entries follow the platform's (keys, usage, requests), in list order. */
  nav?: {
    /** The path under /console/teams/:team_id/ (its first segment marks the entry active). */
    path: string;
    label: string;
    /** Shown only to these roles and above (default: every member). */
    least?: Role;
  };
}

/** A metered service: what GET /usage reports and the quota refuses past the plan's monthly limit. */
export interface ServiceDeclaration {
  /** What it counts, as GET /usage names it (`emails_sent`). */
  metric: string;
  /** How the console's usage page names the service and its unit. */
  label: string;
  unit: string;
  /** The monthly limit of each plan; null is unlimited. */
  limits: Record<Plan, number | null>;
  /** A key holding one of these (or `billing:read`) sees the service in GET /usage. */
  visibleTo: readonly Scope[];
}

export interface ProductDefinition {
  /** The product's name: its folder, its operator routes' path (/api/v1/admin/<name>). */
  name: string;
  /**
   * Its routers with their mount prefixes. The app mounts every product's routers most specific
   * prefix first (more path segments first, list order among equals, the root last), so a router
   * at `/api/v1/webhooks/sources` answers before one at `/api/v1/webhooks`, whichever product
   * declares it; the error shape of a request is that of the longest matching prefix.
   */
  mounts?: readonly ProductMount[];
  /** Operator routes (`createOperatorRouter`), mounted at /api/v1/admin/<name>. */
  operatorRoutes?: OpenAPIHono<AppEnv>;
  /**
   * Operator routes on the operator API's own resources (`createOperatorRouter`), mounted at
   * /api/v1/admin itself: mail's POST /teams/{id}/domains. Their paths must not collide with the
   * platform's (/teams, /teams/{id}, /teams/{id}/keys, /teams/{id}/members, /keys/{id}, /sign-in-links).
   */
  operatorTeamRoutes?: OpenAPIHono<AppEnv>;
  /** Its console pages and navigation entry. */
  console?: ProductConsole;
  /** Its queues (`defineQueue`, in its `*.messages.ts`); wrangler.toml declares each (a test holds them). */
  queues?: readonly QueueDeclaration[];
  /** The consumer of each of its queues. */
  consumers?: readonly Consumer[];
  /** Its scheduled jobs (retention included, see `retention`). */
  crons?: readonly CronJob[];
  /** Its retention jobs: scheduled jobs too, listed apart so the documentation and tests can find them. */
  retention?: readonly CronJob[];
  /**
   * Its Durable Object classes by class_name (wrangler.toml's `class_name`). The entry module must
   * export each under that name: src/products/index.ts re-exports the product's index, which
   * exports them.
   */
  durableObjects?: Readonly<Record<string, abstract new (...args: never[]) => unknown>>;
  /** Its scopes, in the order the scope picker and the demo key list them. */
  scopes?: {
    /** The picker's group label ("Webhook relay"). */
    label: string;
    /** In the specification's set (the demo key and "Full access" hold them). */
    names: readonly Scope[];
    /** Scopes a held scope grants too: `{ "webhooks:write": ["webhooks:read"] }`. */
    implied?: Partial<Record<Scope, readonly Scope[]>>;
  };
  /** Its metered services, by name. */
  services?: Partial<Record<Service, ServiceDeclaration>>;
  /** Rate limits it owns: fixed buckets (limit per 60 s window, or "plan": the plan's API rate, like `default`) and strict families (counted in the team's strict bucket). */
  rateLimits?: {
    buckets?: Partial<Record<ProductBucket, number | "plan">>;
    strictFamilies?: readonly StrictFamily[];
  };
  /** Its OpenAPI tags in reading order, each with the line the reference shows above its group. */
  tags?: readonly { name: string; description: string }[];
}

/** Declares a product (its folder's index.ts): the definition, checked for its shape. */
export function defineProduct<const D extends ProductDefinition>(definition: D): D {
  return definition;
}

/** The products as the platform reads them, with their tables built once. */
export interface Catalog {
  readonly products: readonly ProductDefinition[];
  /** Product scopes in list order. */
  readonly scopes: readonly Scope[];
  readonly implied: ReadonlyMap<Scope, readonly Scope[]>;
  /** Every product service, in list order. */
  readonly services: ReadonlyMap<Service, ServiceDeclaration>;
  readonly buckets: ReadonlyMap<string, number | "plan">;
  readonly strictFamilies: ReadonlySet<string>;
  readonly queues: ReadonlyMap<string, QueueDeclaration>;
}

let current: Catalog | undefined;

/**
 * Registers the products the Worker serves (src/products/index.ts, once; a test may register its
 * own list). Throws when two products declare the same name, scope, service, bucket, family, queue,
 * class or tag, as one would silently shadow the other.
 */
export function registerProducts(products: readonly ProductDefinition[]): Catalog {
  const seen = new Set<string>();
  const once = (kind: string, name: string) => {
    if (seen.has(`${kind}:${name}`)) throw new Error(`two products declare the ${kind} ${name}`);
    seen.add(`${kind}:${name}`);
  };
  const scopes: Scope[] = [];
  const implied = new Map<Scope, readonly Scope[]>();
  const services = new Map<Service, ServiceDeclaration>();
  const buckets = new Map<string, number | "plan">();
  const strictFamilies = new Set<string>();
  const queues = new Map<string, QueueDeclaration>();
  for (const product of products) {
    once("product", product.name);
    for (const scope of product.scopes?.names ?? []) {
      once("scope", scope);
      scopes.push(scope);
    }
    for (const [scope, grants] of Object.entries(product.scopes?.implied ?? {})) implied.set(scope as Scope, grants as readonly Scope[]);
    for (const [name, service] of Object.entries(product.services ?? {})) {
      once("service", name);
      services.set(name as Service, service as ServiceDeclaration);
    }
    for (const [name, limit] of Object.entries(product.rateLimits?.buckets ?? {})) {
      once("bucket", name);
      buckets.set(name, limit as number | "plan");
    }
    for (const family of product.rateLimits?.strictFamilies ?? []) {
      once("strict family", family);
      strictFamilies.add(family);
    }
    for (const queue of product.queues ?? []) {
      once("queue", queue.name);
      queues.set(queue.name, queue);
    }
    for (const name of Object.keys(product.durableObjects ?? {})) once("Durable Object class", name);
    for (const tag of product.tags ?? []) once("tag", tag.name);
  }
  current = { products, scopes, implied, services, buckets, strictFamilies, queues };
  return current;
}

/** The registered products' catalog; throws when src/products/index.ts was never imported. */
export function catalog(): Catalog {
  if (!current) throw new Error("no products registered: import src/products/index.ts before serving");
  return current;
}
