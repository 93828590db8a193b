// A team's keys over the API (docs/ARCHITECTURE.md "Keys over the API"): `GET/POST/DELETE /api/v1/keys` under
// the extension scopes `keys:read` / `keys:write`, through the service the console's keys page uses.
import { z } from "@hono/zod-openapi";
import { getDb } from "../../db/client";
import { MailPolicySchema } from "../admin/admin.schemas";
import { dataResponse, jsonBody, jsonResponse, productRoutes } from "../openapi";
import { createRouter } from "../router";
import { keyScopeTuple, type Scope } from "../scopes";
import { uuidOr404 } from "../tenancy";
import { ApiError } from "../errors";
import { settings } from "../config";
import { createTeamKey, listTeamKeys, MAX_KEYS_PER_TEAM, revokeTeamKey, teamKeyView } from "./keys.service";

const TeamKeySchema = z
  .object({
    id: z.string().uuid(),
    name: z.string().nullable(),
    scopes: z.array(z.string()),
    prefix: z.string(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    mail: MailPolicySchema,
  })
  .openapi("TeamApiKey");

const CreatedTeamKeySchema = TeamKeySchema.extend({
  key: z.string().openapi({ description: "The plaintext key. Shown only in this response." }),
}).openapi("CreatedTeamApiKey");

/** Built when the router is (the scopes are the registered products'). */
const createTeamKeyBody = () =>
  z
    .object({
      name: z.string().trim().min(1).max(200).optional(),
      scopes: z.array(z.enum(keyScopeTuple())).min(1),
      mail: z
        .object({
          sandbox: z.boolean().optional(),
          allowed_streams: z
            .array(z.enum(["transactional", "broadcast"]))
            .min(1)
            .max(2)
            .optional(),
          allowed_recipients: z.array(z.string().email().max(320)).max(100).optional(),
        })
        .strict()
        .optional(),
    })
    .strict()
    .openapi("CreateTeamApiKey");

const IdParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
const ErrorBody = z.object({ error: z.string() }).openapi("KeysError");
const ValidationBody = z.object({ error: z.literal("Validation failed"), details: z.record(z.string(), z.array(z.string())) }).openapi("KeysValidationError");

const route = productRoutes({ tags: ["API keys"], security: "bearer", errorBody: ErrorBody });
const keyNotFound = () => new ApiError("not_found", "Key not found");

/** The team's keys over the API, for the registered products' scopes (built by the app). */
export function createKeysRouter() {
  const keysRouter = createRouter();

  keysRouter.openapi(
    route({
      method: "get",
      path: "/",
      operationId: "listTeamApiKeys",
      summary: "List the team's API keys",
      description: "The team's keys that are not revoked, newest first, without their secrets. Requires `keys:read` (or `keys:write`).",
      scope: "keys:read",
      responses: { 200: dataResponse("The keys", z.array(TeamKeySchema)) },
    }),
    async (c) => c.json({ data: (await listTeamKeys(getDb(c.env.DB), c.get("principal").teamId)).map(teamKeyView) }, 200),
  );

  keysRouter.openapi(
    route({
      method: "post",
      path: "/",
      operationId: "createTeamApiKey",
      summary: "Create an API key (the plaintext is shown only here)",
      description: `Requires \`keys:write\`, which no default or demo key holds (make such a key in the console or with the operator API). A key can only grant scopes it holds itself (403 otherwise). Mail options a team sets itself: \`sandbox\`, \`allowed_streams\`, \`allowed_recipients\`; caps and suspensions are not in the body (422). A key grants only streams and recipients it holds (403 otherwise; a live key without a recipient list holds every recipient), and its children inherit its streams and list when none is given; a sandbox key creates only sandbox keys. A sandbox key gets the team's sandbox caps, or its creator's when smaller; while the team's sandbox sending is suspended, a new sandbox key starts suspended (only the operator lifts it). At most ${MAX_KEYS_PER_TEAM} keys per team (422).`,
      scope: "keys:write",
      request: { body: jsonBody(createTeamKeyBody(), { name: "CI deploys", scopes: ["logs:read", "logs:write"] }) },
      responses: {
        201: dataResponse("The key with its plaintext", CreatedTeamKeySchema),
        422: jsonResponse("Validation failed", ValidationBody),
      },
    }),
    async (c) => {
      const principal = c.get("principal");
      const body = c.req.valid("json");
      const { row, key } = await createTeamKey(
        getDb(c.env.DB),
        principal.teamId,
        { kind: "key", scopes: principal.scopes, mail: principal.mail },
        {
          name: body.name,
          scopes: body.scopes as Scope[],
          mail: body.mail,
        },
        settings(c.env).sandboxCaps,
      );
      return c.json({ data: { ...teamKeyView(row), key } }, 201);
    },
  );

  keysRouter.openapi(
    route({
      method: "delete",
      path: "/{id}",
      operationId: "revokeTeamApiKey",
      summary: "Revoke an API key",
      description:
        "Requires `keys:write`. The key answers 401 from then on (a key may revoke itself). A key revokes only keys whose scopes it holds (403 otherwise). Another team's key answers 404.",
      scope: "keys:write",
      request: { params: IdParam },
      responses: {
        204: { description: "Revoked" },
        403: jsonResponse("The key holds scopes the caller does not", ErrorBody),
        404: jsonResponse("Not found (or another team's)", ErrorBody),
      },
    }),
    async (c) => {
      const principal = c.get("principal");
      await revokeTeamKey(getDb(c.env.DB), principal.teamId, uuidOr404(c.req.valid("param").id, keyNotFound), {
        kind: "key",
        scopes: principal.scopes,
        mail: principal.mail,
      });
      return c.body(null, 204);
    },
  );
  return keysRouter;
}
