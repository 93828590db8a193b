// The operator API: teams and keys, standing in for the dashboard the specification mentions, and
// the operator routes each product declares.
import { z } from "@hono/zod-openapi";
import type { ProductDefinition } from "../products";
import { getDb } from "../../db/client";
import { createRouter } from "../router";
import { dataResponse, jsonBody, jsonResponse } from "../openapi";
import { operatorRoute } from "./operator-routes";
import { AdminError, CreatedKeySchema, createKeyBody, CreateTeamBody, IdParam, KeySchema, PatchKeyBody, PatchTeamBody, TeamSchema } from "./admin.schemas";
import { createKey, createTeam, getTeam, keyView, revokeKey, teamView, updateKey, updateTeam } from "./admin.service";
import { addMember } from "../../console/members.service";
import { operatorSignInLink } from "../../console/sign-in.service";
import { ROLES } from "../../db/schema";

/** `createRoute` of the operator API (operator-routes.ts, shared with the products' operator routes). */
const route = operatorRoute;

/** The operator API, with each product's operator routes under /<product> (built by the app). */
export function createAdminRouter(products: readonly ProductDefinition[]) {
  const adminRouter = createRouter();

  adminRouter.openapi(
    route({
      method: "post",
      path: "/teams",
      operationId: "createTeam",
      summary: "Create a team",
      description:
        "Operator token only (`Authorization: Bearer <ADMIN_TOKEN>`), not a team key. Creates a team on `plan` (default `free`); `owner_email` receives the usage warnings. Then create its first key with `createApiKey`.",
      request: { body: jsonBody(CreateTeamBody, { name: "Acme", plan: "free", owner_email: "ops@acme.test" }) },
      responses: { 201: dataResponse("The team", TeamSchema) },
    }),
    async (c) => {
      const team = await createTeam(getDb(c.env.DB), c.req.valid("json"));
      return c.json({ data: teamView(team) }, 201);
    },
  );

  adminRouter.openapi(
    route({
      method: "get",
      path: "/teams/{id}",
      operationId: "getTeam",
      summary: "Get a team",
      description: "Operator token only. The team with its plan and owner; an unknown id answers 404.",
      request: { params: IdParam },
      responses: { 200: dataResponse("The team", TeamSchema) },
    }),
    async (c) => c.json({ data: teamView(await getTeam(getDb(c.env.DB), c.req.valid("param").id)) }, 200),
  );

  adminRouter.openapi(
    route({
      method: "patch",
      path: "/teams/{id}",
      operationId: "updateTeam",
      summary: "Change a team's plan, name or owner",
      description: "Operator token only. Changes the plan (limits and quotas follow at once), the name or the owner's address; only the fields sent change.",
      request: { params: IdParam, body: jsonBody(PatchTeamBody, { plan: "starter" }) },
      responses: { 200: dataResponse("The team", TeamSchema) },
    }),
    async (c) => {
      const team = await updateTeam(getDb(c.env.DB), c.req.valid("param").id, c.req.valid("json"));
      return c.json({ data: teamView(team) }, 200);
    },
  );

  adminRouter.openapi(
    route({
      method: "post",
      path: "/teams/{id}/keys",
      operationId: "createApiKey",
      summary: "Create an API key (the plaintext is shown only here)",
      description:
        "Operator token only. A key for the team with the listed `scopes` (the specification's scopes plus `keys:read` / `keys:write`) and an optional mail policy (sandbox, allowed streams and recipients, caps). The plaintext `key` is in this answer only; only its SHA-256 hash is stored.",
      request: { params: IdParam, body: jsonBody(createKeyBody(), { name: "CI", scopes: ["logs:read", "logs:write"] }) },
      responses: { 201: dataResponse("The key with its plaintext", CreatedKeySchema) },
    }),
    async (c) => {
      const { row, key } = await createKey(getDb(c.env.DB), c.req.valid("param").id, c.req.valid("json"));
      return c.json({ data: { ...keyView(row), key } }, 201);
    },
  );

  adminRouter.openapi(
    route({
      method: "patch",
      path: "/keys/{id}",
      operationId: "updateApiKey",
      summary: "Change a key's name or mail policy (lift or set a sandbox suspension)",
      description:
        "Operator token only. Renames a key or changes its mail policy, including setting or lifting a sandbox suspension. The plaintext is never returned again.",
      request: { params: IdParam, body: jsonBody(PatchKeyBody, { name: "CI (rotated)" }) },
      responses: { 200: dataResponse("The key, without plaintext", KeySchema) },
    }),
    async (c) => {
      const row = await updateKey(getDb(c.env.DB), c.req.valid("param").id, c.req.valid("json"));
      return c.json({ data: keyView(row) }, 200);
    },
  );

  adminRouter.openapi(
    route({
      method: "delete",
      path: "/keys/{id}",
      operationId: "revokeApiKey",
      summary: "Revoke a key",
      description: "Operator token only. The key answers 401 from then on: at once on the isolate that revoked it, within 10 s everywhere else.",
      request: { params: IdParam },
      responses: { 204: { description: "Revoked; the key answers 401 from now on" } },
    }),
    async (c) => {
      await revokeKey(getDb(c.env.DB), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  const MemberSchema = z
    .object({ team_id: z.string(), user_id: z.string(), email: z.string(), role: z.enum(ROLES), created_at: z.string() })
    .openapi("TeamMember");

  adminRouter.openapi(
    route({
      method: "post",
      path: "/teams/{id}/members",
      operationId: "addTeamMember",
      summary: "Make an address a member of a team with a role",
      description:
        "Operator token only. Creates the user when the address is new. An existing member gets the role; the last owner cannot be demoted (409). The member signs in with a one-time link (POST /admin/sign-in-links, or the console's sign-in page).",
      request: {
        params: IdParam,
        body: jsonBody(z.object({ email: z.string().trim().email().max(320), role: z.enum(ROLES) }).openapi("AdminAddMember"), {
          email: "teammate@example.com",
          role: "developer",
        }),
      },
      responses: { 201: dataResponse("The membership", MemberSchema), 409: jsonResponse("The last owner cannot be demoted", AdminError) },
    }),
    async (c) => {
      const team = await getTeam(getDb(c.env.DB), c.req.valid("param").id);
      return c.json({ data: await addMember(getDb(c.env.DB), team.id, c.req.valid("json")) }, 201);
    },
  );

  adminRouter.openapi(
    route({
      method: "post",
      path: "/sign-in-links",
      operationId: "createSignInLink",
      summary: "Mint a one-time console sign-in link for a user (support, local development)",
      description:
        "Operator token only. The link works once, for 15 minutes. It is logged (who, when; never the token). An address that is no user answers 404.",
      request: { body: jsonBody(z.object({ email: z.string().trim().email().max(320) }).openapi("AdminSignInLink"), { email: "owner@example.com" }) },
      responses: { 201: dataResponse("The link", z.object({ url: z.string(), expires_at: z.string() }).openapi("SignInLink")) },
    }),
    async (c) => c.json({ data: await operatorSignInLink(c.env, c.req.valid("json").email) }, 201),
  );

  // Operator routes a product owns, declared in its definition: each under /api/v1/admin/<product>,
  // and those on the operator's own resources (mail's /teams/{id}/domains) at /api/v1/admin itself.
  for (const product of products) {
    if (product.operatorRoutes) adminRouter.route(`/${product.name}`, product.operatorRoutes);
    if (product.operatorTeamRoutes) adminRouter.route("/", product.operatorTeamRoutes);
  }

  // A path no route serves gets the same check as the routes before its 404 or 405.
  adminRouter.use("*", ...route.unmatched());
  return adminRouter;
}
