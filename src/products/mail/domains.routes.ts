// Sending domains under /api/v1/domains (docs/ARCHITECTURE.md "Sending domains"): add, list, get, delete and
// verify over DNS-over-HTTPS. Errors use the mail product's shapes. The operator's direct
// verification lives in the operator API (src/platform/admin).
import { z } from "@hono/zod-openapi";
import { dataResponse, jsonBody, jsonResponse, productRoutes } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { uuidOr404 } from "../../platform/tenancy";
import { mailErrorFormat } from "./mail.errors";
import { addDomain, deleteDomain, domainNotFound, domainView, getDomain, listDomains, verifyDomain } from "./domains.service";

const IdParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
const DomainBody = z.strictObject({ name: z.string().max(253).openapi({ example: "acme.dev" }) }).openapi("AddDomain");
export const DomainSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.enum(["pending", "verified"]),
    records: z.array(z.object({ type: z.literal("TXT"), name: z.string(), value: z.string() })),
    created_at: z.string(),
    verified_at: z.string().nullable(),
  })
  .openapi("SendingDomain");
const ErrorBody = z.object({ error: z.string() }).openapi("DomainError");
const ValidationBody = z.object({ error: z.literal("Validation failed"), details: z.record(z.string(), z.array(z.string())) }).openapi("DomainValidationError");
const route = productRoutes({ tags: ["Mail: sending domains"], security: "bearer", errorBody: ErrorBody });
/** What the routes on one domain, and the create route, answer besides the shared errors. */
const errors = { 404: jsonResponse("Not found (or another team's)", ErrorBody), 422: jsonResponse("Validation failed", ValidationBody) };

const domainId = (id: string) => uuidOr404(id, domainNotFound);

export const domainsRouter = createRouter({ errorFormat: mailErrorFormat, wrongMethodIsNotFound: true });

domainsRouter.openapi(
  route({
    method: "post",
    path: "/",
    operationId: "createDomain",
    summary: "Add a sending domain",
    description:
      "Adds a domain the team wants to send from, `pending` until verified. Publish the returned TXT record (`_edge-platform.<name>` = `edp-verify=<token>`) and call verify. A live key may send only from a verified domain of its team (403 `domain_not_verified`). The platform's own sender domain and the sandbox domain cannot be added (422); at most 50 domains per team. Requires `mail:send`.",
    scope: "mail:send",
    idempotent: true,
    request: { body: jsonBody(DomainBody, { name: "mail.yourcompany.com" }) },
    responses: { 201: dataResponse("The domain, pending, with the record to publish", DomainSchema), ...errors },
  }),
  async (c) => c.json({ data: domainView(await addDomain(c.env, c.get("principal").teamId, c.req.valid("json").name)) }, 201),
);

domainsRouter.openapi(
  route({
    method: "get",
    path: "/",
    operationId: "listDomains",
    summary: "List sending domains",
    description: "The team's domains, newest first. Requires `mail:send` or `mail:read`.",
    scope: ["mail:send", "mail:read"],
    responses: { 200: dataResponse("The domains", z.array(DomainSchema)) },
  }),
  async (c) => c.json({ data: (await listDomains(c.env, c.get("principal").teamId)).map(domainView) }, 200),
);

domainsRouter.openapi(
  route({
    method: "get",
    path: "/{id}",
    operationId: "getDomain",
    summary: "Get a sending domain",
    description:
      "Requires `mail:send` or `mail:read`. The domain, its status (`pending` or `verified`) and the TXT record to publish; another team's domain answers 404.",
    scope: ["mail:send", "mail:read"],
    request: { params: IdParam },
    responses: { 200: dataResponse("The domain", DomainSchema), ...errors },
  }),
  async (c) => c.json({ data: domainView(await getDomain(c.env, c.get("principal").teamId, domainId(c.req.valid("param").id))) }, 200),
);

domainsRouter.openapi(
  route({
    method: "delete",
    path: "/{id}",
    operationId: "deleteDomain",
    summary: "Delete a sending domain",
    description: "Live keys can no longer send from it. Requires `mail:send`.",
    scope: "mail:send",
    request: { params: IdParam },
    responses: { 204: { description: "Deleted" }, ...errors },
  }),
  async (c) => {
    await deleteDomain(c.env, c.get("principal").teamId, domainId(c.req.valid("param").id));
    return c.body(null, 204);
  },
);

domainsRouter.openapi(
  route({
    method: "post",
    path: "/{id}/verify",
    operationId: "verifyDomain",
    summary: "Verify a sending domain",
    description:
      "Looks the TXT record `_edge-platform.<name>` up over DNS-over-HTTPS (the resolver at `DNS_RESOLVER_URL`). 200 with `status: verified` when it holds the domain's `edp-verify=<token>`; 422 with what was found otherwise; 503 when the resolver cannot be reached. Requires `mail:send`.",
    scope: "mail:send",
    request: { params: IdParam },
    responses: { 200: dataResponse("The verified domain", DomainSchema), ...errors, 503: jsonResponse("The DNS resolver could not be reached", ErrorBody) },
  }),
  async (c) => c.json({ data: domainView(await verifyDomain(c.env, c.get("principal").teamId, domainId(c.req.valid("param").id))) }, 200),
);
