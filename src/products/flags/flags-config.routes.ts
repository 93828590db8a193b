// Segments, environments and client keys of the flags server API (mounted by flags.routes.ts
// before its `/{key}` routes: `segments` and `environments` are reserved flag keys).
import { z } from "@hono/zod-openapi";
import { dataResponse, jsonBody, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { createClientKey, deleteClientKey, listClientKeys } from "./flags-client-keys.service";
import { FlagsErrorSchema, flagsInvalid, flagsRoute as route } from "./flags.openapi";
import { CreateEnvironmentSchema, CreateSegmentSchema, EnvironmentSchema, SegmentSchema, UpdateSegmentSchema } from "./flags.schemas";
import { createEnvironment, createSegment, deleteSegment, getSegment, listEnvironments, listSegments, updateSegment } from "./flags.service";

export const flagsConfigRouter = createRouter();

const SegmentParam = z.object({ key: z.string().openapi({ param: { name: "key", in: "path" } }) });
const segmentNotFound = { 404: jsonResponse("Segment not found (or another team's)", FlagsErrorSchema) };

flagsConfigRouter.openapi(
  route({
    method: "get",
    path: "/segments",
    operationId: "listFlagSegments",
    scope: "flags:read",
    summary: "List segments",
    description: "The team's segments (key, name, included and excluded context keys, rules), which flag rules name with `in_segment`.",
    responses: { 200: dataResponse("Segments", z.array(SegmentSchema)) },
  }),
  async (c) => c.json({ data: await listSegments(c.env, c.get("principal").teamId) }, 200),
);

flagsConfigRouter.openapi(
  route({
    method: "post",
    path: "/segments",
    operationId: "createFlagSegment",
    scope: "flags:write",
    idempotent: true,
    summary: "Create a segment",
    description:
      "A context is in the segment when its key is `included` (and not `excluded`: excluded wins), or when it matches one of the segment's `rules` (and is not excluded). Up to 10,000 keys in each list; a segment's rules cannot name segments.",
    request: { body: jsonBody(CreateSegmentSchema, { key: "beta-testers", name: "Beta testers", included: ["user-1", "user-2"] }) },
    responses: { 201: dataResponse("The segment", SegmentSchema), 409: jsonResponse("A segment with this key exists", FlagsErrorSchema), ...flagsInvalid },
  }),
  async (c) => c.json({ data: await createSegment(c.env, c.get("principal").teamId, c.req.valid("json")) }, 201),
);

flagsConfigRouter.openapi(
  route({
    method: "get",
    path: "/segments/{key}",
    operationId: "getFlagSegment",
    scope: "flags:read",
    summary: "Get a segment",
    description: "One segment by its key. Another team's segment, or an unknown key, answers 404.",
    request: { params: SegmentParam },
    responses: { 200: dataResponse("The segment", SegmentSchema), ...segmentNotFound },
  }),
  async (c) => c.json({ data: await getSegment(c.env, c.get("principal").teamId, c.req.valid("param").key) }, 200),
);

flagsConfigRouter.openapi(
  route({
    method: "patch",
    path: "/segments/{key}",
    operationId: "updateFlagSegment",
    scope: "flags:write",
    summary: "Change a segment",
    description: "Given fields replace the stored ones (a list is replaced whole). Every flag naming the segment sees the change.",
    request: { params: SegmentParam, body: jsonBody(UpdateSegmentSchema, { name: "Beta testers (EU)" }) },
    responses: { 200: dataResponse("The segment", SegmentSchema), ...segmentNotFound, ...flagsInvalid },
  }),
  async (c) => c.json({ data: await updateSegment(c.env, c.get("principal").teamId, c.req.valid("param").key, c.req.valid("json")) }, 200),
);

flagsConfigRouter.openapi(
  route({
    method: "delete",
    path: "/segments/{key}",
    operationId: "deleteFlagSegment",
    scope: "flags:write",
    summary: "Delete a segment",
    description: "409 while a flag's rule names it.",
    request: { params: SegmentParam },
    responses: { 204: { description: "Deleted" }, 409: jsonResponse("A flag uses the segment (named in the message)", FlagsErrorSchema), ...segmentNotFound },
  }),
  async (c) => {
    await deleteSegment(c.env, c.get("principal").teamId, c.req.valid("param").key);
    return c.body(null, 204);
  },
);

flagsConfigRouter.openapi(
  route({
    method: "get",
    path: "/environments",
    operationId: "listFlagEnvironments",
    scope: "flags:read",
    summary: "List environments",
    description: "`production` and `development` exist from the start; a team has up to 10.",
    responses: { 200: dataResponse("Environments", z.array(EnvironmentSchema)) },
  }),
  async (c) => c.json({ data: await listEnvironments(c.env, c.get("principal").teamId) }, 200),
);

flagsConfigRouter.openapi(
  route({
    method: "post",
    path: "/environments",
    operationId: "createFlagEnvironment",
    scope: "flags:write",
    idempotent: true,
    summary: "Create an environment",
    description: "Every flag is off in a new environment until configured. At most 10 environments (422).",
    request: { body: jsonBody(CreateEnvironmentSchema, { key: "staging", name: "Staging" }) },
    responses: {
      201: dataResponse("The environment", EnvironmentSchema),
      409: jsonResponse("An environment with this key exists", FlagsErrorSchema),
      ...flagsInvalid,
    },
  }),
  async (c) => c.json({ data: await createEnvironment(c.env, c.get("principal").teamId, c.req.valid("json")) }, 201),
);

const EnvParam = z.object({ env: z.string().openapi({ param: { name: "env", in: "path" } }) });
const ClientKeyParams = EnvParam.extend({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
const ClientKeySchema = z
  .object({ id: z.string(), name: z.string(), environment: z.string(), prefix: z.string(), allowed_origins: z.array(z.string()), created_at: z.string() })
  .openapi("FlagClientKey");
const Origin = z
  .string()
  .max(255)
  .regex(/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/, "must be an origin: scheme://host[:port], no path");
const CreateClientKeySchema = z
  .strictObject({ name: z.string().trim().min(1).max(200).optional(), allowed_origins: z.array(Origin).max(20, "has more than 20 origins").optional() })
  .openapi("CreateFlagClientKey");
const envNotFound = { 404: jsonResponse("Environment or client key not found", FlagsErrorSchema) };

flagsConfigRouter.openapi(
  route({
    method: "get",
    path: "/environments/{env}/client-keys",
    operationId: "listFlagClientKeys",
    scope: "flags:read",
    summary: "List an environment's client keys",
    description: "Without the keys themselves (shown once, at creation).",
    request: { params: EnvParam },
    responses: { 200: dataResponse("Client keys", z.array(ClientKeySchema)), ...envNotFound },
  }),
  async (c) => c.json({ data: await listClientKeys(c.env, c.get("principal").teamId, c.req.valid("param").env) }, 200),
);

flagsConfigRouter.openapi(
  route({
    method: "post",
    path: "/environments/{env}/client-keys",
    operationId: "createFlagClientKey",
    scope: "flags:write",
    idempotent: true,
    summary: "Create a client key",
    description:
      "A key (`fck_…`, shown only in this answer) for browsers and apps: it evaluates the environment's `client_side` flags on `/flags/client/...` and OFREP, nothing else. `allowed_origins` (empty: any) limits the browsers' origins (CORS). Up to 20 per environment.",
    request: { params: EnvParam, body: jsonBody(CreateClientKeySchema, { name: "Web app", allowed_origins: ["https://app.example.com"] }) },
    responses: { 201: dataResponse("The key, with its plaintext `key` (once)", ClientKeySchema.extend({ key: z.string() })), ...envNotFound, ...flagsInvalid },
  }),
  async (c) => c.json({ data: await createClientKey(c.env, c.get("principal").teamId, c.req.valid("param").env, c.req.valid("json")) }, 201),
);

flagsConfigRouter.openapi(
  route({
    method: "delete",
    path: "/environments/{env}/client-keys/{id}",
    operationId: "deleteFlagClientKey",
    scope: "flags:write",
    summary: "Delete a client key",
    description: "The key answers 401 at once on this isolate, and everywhere within 5 s.",
    request: { params: ClientKeyParams },
    responses: { 204: { description: "Deleted" }, ...envNotFound },
  }),
  async (c) => {
    const { env, id } = c.req.valid("param");
    await deleteClientKey(c.env, c.get("principal").teamId, env, id);
    return c.body(null, 204);
  },
);
