// GET /usage: the monthly plan quota of each metered service, filtered by what the key may see,
// read from the team's meter (read-usage.ts).
import { z } from "@hono/zod-openapi";
import { SERVICES, type Service } from "../plans";
import { createRouter } from "../router";
import { hasScope, type Scope } from "../scopes";
import { dataResponse, productRoutes } from "../openapi";
import { readUsage, usageFrom } from "./read-usage";

const ServiceUsage = z
  .object({
    metric: z.string(),
    used: z.number(),
    limit: z.number().nullable(),
    remaining: z.number().nullable(),
    unlimited: z.boolean(),
  })
  .openapi("ServiceUsage");

const UsageSchema = z
  .object({
    period_start: z.string(),
    period_end: z.string(),
    plan: z.string(),
    services: z.record(z.string(), ServiceUsage),
  })
  .openapi("Usage");

/** The scopes that make a service visible to a key without `billing:read`. */
const SERVICE_SCOPES: Record<Service, Scope[]> = {
  mail: ["mail:send", "mail:read"],
  ai: ["audit:read", "audit:write"],
  surveys: ["surveys:read", "surveys:write"],
  push: ["push:read", "push:write"],
  webhooks: ["webhooks:read"],
  logs: ["logs:read", "logs:write"],
  flags: ["flags:read", "flags:write"],
};

/** Services a key sees: every one with billing:read, else mail plus those it holds a scope of. */
export function visibleServices(scopes: readonly string[]): Service[] {
  if (hasScope(scopes, "billing:read")) return [...SERVICES];
  return SERVICES.filter((service) => service === "mail" || SERVICE_SCOPES[service].some((scope) => hasScope(scopes, scope)));
}

const route = productRoutes({ tags: ["Usage"], security: "bearer" });

export const usageRouter = createRouter();

usageRouter.openapi(
  route({
    method: "get",
    path: "/",
    operationId: "getUsage",
    scope: ["mail:send", "mail:read", "billing:read"],
    // The usage is read in the same meter call that counts the request (auth's readsUsage).
    readsUsage: true,
    summary: "Monthly plan quota per metered service",
    description:
      "`billing:read` sees every service; a key with `mail:send` or `mail:read` sees `mail` and the services it holds a scope of; any other key gets 403. Periods are UTC calendar months.",
    responses: { 200: dataResponse("Usage of the current month", UsageSchema) },
  }),
  async (c) => {
    const principal = c.get("principal");
    const read = await c.get("usageRead");
    const { month } = read ? usageFrom(read.snapshot, read.at, principal.plan) : await readUsage(c.env, principal.teamId, principal.plan);
    const services: Record<string, z.infer<typeof ServiceUsage>> = {};
    for (const service of visibleServices(principal.scopes)) services[service] = month.services[service];
    return c.json({ data: { period_start: month.start, period_end: month.end, plan: principal.plan, services } }, 200);
  },
);

// A path no route serves gets the same check as the routes before its 404 or 405.
usageRouter.use("*", ...route.unmatched("mail:send", "mail:read", "billing:read"));
