// Mail's operator route on the operator API's teams, mounted at /api/v1/admin (the mail
// definition's `operatorTeamRoutes`): verifying a team's sending domain without a DNS look-up.
import { z } from "@hono/zod-openapi";
import { getDb } from "../../db/client";
import { IdParam } from "../../platform/admin/admin.schemas";
import { getTeam } from "../../platform/admin/admin.service";
import { createOperatorRouter, operatorRoute } from "../../platform/admin/operator-routes";
import { dataResponse, jsonBody } from "../../platform/openapi";
import { DomainSchema } from "./domains.routes";
import { addDomain, domainView } from "./domains.service";

export const domainsAdminRoutes = createOperatorRouter();

domainsAdminRoutes.openapi(
  operatorRoute({
    method: "post",
    path: "/teams/{id}/domains",
    operationId: "addTeamDomain",
    summary: "Verify a sending domain for a team directly",
    description:
      "Operator token only. Adds the domain to the team as `verified` (or verifies the team's pending one), whatever other teams hold for it, without a DNS look-up. The platform's own sender domain and the sandbox domain answer 422.",
    request: { params: IdParam, body: jsonBody(z.object({ name: z.string().max(253) }).openapi("AdminAddDomain"), { name: "mail.acme.test" }) },
    responses: { 201: dataResponse("The verified domain", DomainSchema) },
  }),
  async (c) => {
    const team = await getTeam(getDb(c.env.DB), c.req.valid("param").id);
    return c.json({ data: domainView(await addDomain(c.env, team.id, c.req.valid("json").name, "verified")) }, 201);
  },
);
