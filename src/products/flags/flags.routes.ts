// The flags product's server API under /api/v1/flags (team API key; NAMED-PRODUCTS.md "Feature
// flags"): flags with versions, history, revert and If-Match, scheduled changes and insights here;
// segments, environments and client keys in flags-config.routes.ts; the ruleset, evaluate, bootstrap
// and track in flags-evaluate.routes.ts. Those are mounted first: their static paths
// (`/segments`, `/ruleset`, …) are reserved flag keys and must win over `/{key}`.
import { z } from "@hono/zod-openapi";
import { dataResponse, jsonBody, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { flagsConfigRouter } from "./flags-config.routes";
import { flagsEvaluateRouter } from "./flags-evaluate.routes";
import { FlagsErrorSchema, flagNotFoundResponse, flagsErrorFormat, flagsInvalid, flagsRoute } from "./flags.openapi";
import { ActorSchema, CreateFlagSchema, EnvKey, FlagSchema, ServeSchema, UpdateFlagSchema } from "./flags.schemas";
import {
  createFlag,
  deleteFlag,
  deleteScheduledChange,
  flagHistory,
  flagInsights,
  getFlag,
  getScheduledChange,
  ifMatchVersion,
  keyActor,
  listFlags,
  listScheduledChanges,
  revertFlag,
  scheduleChange,
  updateFlag,
} from "./flags.service";

const route = flagsRoute;

const KeyParam = z.object({ key: z.string().openapi({ param: { name: "key", in: "path" } }) });
const ScheduleParams = KeyParam.extend({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
const IfMatch = z.object({
  "if-match": z.string().optional().openapi({ description: 'The version the change is made against: `"<version>"`; 412 when the flag has moved on.' }),
});

export const flagsRouter = createRouter({ errorFormat: flagsErrorFormat });
flagsRouter.route("/", flagsEvaluateRouter);
flagsRouter.route("/", flagsConfigRouter);

const ListQuery = z.object({
  tag: z.string().max(64).optional(),
  stale: z
    .enum(["true", "false"])
    .optional()
    .openapi({ description: "`true`: only flags not evaluated for 30 days, or serving one variant to everyone for 30 days (`stale_reason`)." }),
});

flagsRouter.openapi(
  route({
    method: "get",
    path: "/",
    operationId: "listFlags",
    scope: "flags:read",
    summary: "List flags",
    description:
      "Every flag of the team with each environment's configuration, by key. Filter by `tag`; `stale=true` lists the stale ones with `stale_reason`.",
    request: { query: ListQuery },
    responses: { 200: dataResponse("Flags", z.array(FlagSchema.extend({ stale_reason: z.enum(["not_evaluated", "one_variant"]).optional() }))) },
  }),
  async (c) => {
    const { tag, stale } = c.req.valid("query");
    return c.json({ data: await listFlags(c.env, c.get("principal").teamId, { tag, stale: stale === "true" }) }, 200);
  },
);

flagsRouter.openapi(
  route({
    method: "post",
    path: "/",
    operationId: "createFlag",
    scope: "flags:write",
    idempotent: true,
    summary: "Create a flag",
    description:
      "A boolean flag defaults to variants `{on: true, off: false}`, off serving `off`, and every environment off with the fallthrough `on`. The `salt` is random and fixed. Keys `evaluate`, `bootstrap`, `track`, `ruleset`, `segments`, `environments` and `client` are reserved (422).",
    request: { body: jsonBody(CreateFlagSchema, { key: "new-checkout", name: "New checkout", client_side: true, tags: ["checkout"] }) },
    responses: { 201: dataResponse("The flag (version 1)", FlagSchema), 409: jsonResponse("A flag with this key exists", FlagsErrorSchema), ...flagsInvalid },
  }),
  async (c) => {
    const principal = c.get("principal");
    const flag = await createFlag(c.env, principal.teamId, c.req.valid("json"), keyActor(principal));
    return c.json({ data: flag }, 201, { etag: `"${flag.version}"` });
  },
);

flagsRouter.openapi(
  route({
    method: "get",
    path: "/{key}",
    operationId: "getFlag",
    scope: "flags:read",
    summary: "Get a flag",
    description: "The flag with every environment's configuration; `ETag` is its version.",
    request: { params: KeyParam },
    responses: { 200: dataResponse("The flag", FlagSchema), ...flagNotFoundResponse },
  }),
  async (c) => {
    const flag = await getFlag(c.env, c.get("principal").teamId, c.req.valid("param").key);
    return c.json({ data: flag }, 200, { etag: `"${flag.version}"` });
  },
);

flagsRouter.openapi(
  route({
    method: "patch",
    path: "/{key}",
    operationId: "updateFlag",
    scope: "flags:write",
    summary: "Change a flag",
    description:
      'Given fields replace the stored ones; `environments` merge per environment and field (`{"production": {"enabled": false}}` is the kill switch). Every change is a new version (+1) with its actor in the history. `If-Match: "<version>"` makes the change only against that version (412 otherwise). `key`, `type` and `salt` never change.',
    request: { params: KeyParam, headers: IfMatch, body: jsonBody(UpdateFlagSchema, { environments: { production: { enabled: true } } }) },
    responses: {
      200: dataResponse("The new version", FlagSchema),
      412: jsonResponse("The flag is no longer at the If-Match version", FlagsErrorSchema),
      ...flagNotFoundResponse,
      ...flagsInvalid,
    },
  }),
  async (c) => {
    const principal = c.get("principal");
    const ifMatch = ifMatchVersion(c.req.header("if-match"));
    const flag = await updateFlag(c.env, principal.teamId, c.req.valid("param").key, c.req.valid("json"), ifMatch, keyActor(principal));
    return c.json({ data: flag }, 200, { etag: `"${flag.version}"` });
  },
);

flagsRouter.openapi(
  route({
    method: "delete",
    path: "/{key}",
    operationId: "deleteFlag",
    scope: "flags:write",
    summary: "Delete a flag",
    description: "The flag, its history, scheduled changes and insights go; evaluations answer FLAG_NOT_FOUND (within 5 s on every isolate).",
    request: { params: KeyParam },
    responses: { 204: { description: "Deleted" }, ...flagNotFoundResponse },
  }),
  async (c) => {
    await deleteFlag(c.env, c.get("principal").teamId, c.req.valid("param").key);
    return c.body(null, 204);
  },
);

const HistoryEntrySchema = z
  .object({ version: z.number().int(), at: z.string(), actor: ActorSchema, changes: z.array(z.string()) })
  .openapi("FlagHistoryEntry", { description: "`changes`: the fields the version changed (`environments.<env>.<field>` inside environments)." });

flagsRouter.openapi(
  route({
    method: "get",
    path: "/{key}/history",
    operationId: "getFlagHistory",
    scope: "flags:read",
    summary: "A flag's history",
    description: "Every change, newest first: `version`, `at`, `actor` (key or console user, or a scheduled change) and what changed.",
    request: { params: KeyParam, query: z.object({ limit: z.coerce.number().int().min(1).max(500).optional() }) },
    responses: { 200: dataResponse("Versions", z.array(HistoryEntrySchema)), ...flagNotFoundResponse },
  }),
  async (c) => c.json({ data: await flagHistory(c.env, c.get("principal").teamId, c.req.valid("param").key, c.req.valid("query").limit ?? 100) }, 200),
);

flagsRouter.openapi(
  route({
    method: "post",
    path: "/{key}/revert",
    operationId: "revertFlag",
    scope: "flags:write",
    summary: "Revert a flag",
    description:
      'A new version equal to `version` (its variants, environments, name, tags…; key, type and salt stay). `If-Match: "<version>"` makes the revert only against that current version (412 otherwise), as PATCH.',
    request: { params: KeyParam, headers: IfMatch, body: jsonBody(z.strictObject({ version: z.number().int().min(1) }), { version: 1 }) },
    responses: {
      200: dataResponse("The new version", FlagSchema),
      412: jsonResponse("The flag is no longer at the If-Match version", FlagsErrorSchema),
      ...flagNotFoundResponse,
      ...flagsInvalid,
    },
  }),
  async (c) => {
    const principal = c.get("principal");
    const ifMatch = ifMatchVersion(c.req.header("if-match"));
    const { key } = c.req.valid("param");
    const flag = await revertFlag(c.env, principal.teamId, key, c.req.valid("json").version, keyActor(principal), ifMatch);
    return c.json({ data: flag }, 200, { etag: `"${flag.version}"` });
  },
);

const ScheduleSchema = z
  .strictObject({ environment: EnvKey, at: z.iso.datetime({ offset: true }), enabled: z.boolean().optional(), fallthrough: ServeSchema.optional() })
  .refine((s) => s.enabled !== undefined || s.fallthrough !== undefined, { message: "must change `enabled` or `fallthrough`", path: ["enabled"] })
  .openapi("ScheduleFlagChange");
const ScheduledSchema = z
  .object({
    id: z.string(),
    flag: z.string(),
    environment: z.string(),
    at: z.string(),
    enabled: z.boolean().optional(),
    fallthrough: ServeSchema.optional(),
    status: z.enum(["pending", "applied", "failed"]),
    actor: ActorSchema,
    created_at: z.string(),
    applied_at: z.string().nullable(),
    applied_version: z.number().int().nullable(),
    error: z.string().nullable(),
  })
  .openapi("ScheduledFlagChange");
const scheduleNotFound = { 404: jsonResponse("Flag or scheduled change not found", FlagsErrorSchema) };

flagsRouter.openapi(
  route({
    method: "post",
    path: "/{key}/scheduled-changes",
    operationId: "scheduleFlagChange",
    scope: "flags:write",
    idempotent: true,
    summary: "Schedule a change",
    description:
      "Turns an environment on or off, or sets its fallthrough (a rollout's new shares), at `at`: applied by the team's store within 60 s of `at` as a new version (actor: the schedule). `If-Match: \"<version>\"` schedules it only while the flag is at that version (412 otherwise), as PATCH.",
    request: { params: KeyParam, headers: IfMatch, body: jsonBody(ScheduleSchema, { environment: "production", at: "2030-01-01T09:00:00Z", enabled: true }) },
    responses: {
      201: dataResponse("The scheduled change", ScheduledSchema),
      412: jsonResponse("The flag is no longer at the If-Match version", FlagsErrorSchema),
      ...flagNotFoundResponse,
      ...flagsInvalid,
    },
  }),
  async (c) => {
    const principal = c.get("principal");
    const ifMatch = ifMatchVersion(c.req.header("if-match"));
    const { at, ...rest } = c.req.valid("json");
    const change = await scheduleChange(c.env, principal.teamId, c.req.valid("param").key, { ...rest, at: Date.parse(at) }, keyActor(principal), ifMatch);
    return c.json({ data: change }, 201);
  },
);

flagsRouter.openapi(
  route({
    method: "get",
    path: "/{key}/scheduled-changes",
    operationId: "listScheduledFlagChanges",
    scope: "flags:write",
    summary: "List scheduled changes",
    description: "Pending, applied and failed changes of the flag, by due time.",
    request: { params: KeyParam },
    responses: { 200: dataResponse("Scheduled changes", z.array(ScheduledSchema)), ...flagNotFoundResponse },
  }),
  async (c) => c.json({ data: await listScheduledChanges(c.env, c.get("principal").teamId, c.req.valid("param").key) }, 200),
);

flagsRouter.openapi(
  route({
    method: "get",
    path: "/{key}/scheduled-changes/{id}",
    operationId: "getScheduledFlagChange",
    scope: "flags:write",
    summary: "Get a scheduled change",
    description: "One scheduled change of the flag: its environment, when it applies (within 60 s of `at`), what it sets, and whether it was applied.",
    request: { params: ScheduleParams },
    responses: { 200: dataResponse("The scheduled change", ScheduledSchema), ...scheduleNotFound },
  }),
  async (c) => {
    const { key, id } = c.req.valid("param");
    return c.json({ data: await getScheduledChange(c.env, c.get("principal").teamId, key, id) }, 200);
  },
);

flagsRouter.openapi(
  route({
    method: "delete",
    path: "/{key}/scheduled-changes/{id}",
    operationId: "deleteScheduledFlagChange",
    scope: "flags:write",
    summary: "Cancel a scheduled change",
    description: "Cancels a change that has not been applied yet (an applied one's record is deleted); the flag itself is not changed.",
    request: { params: ScheduleParams },
    responses: { 204: { description: "Cancelled (or its record deleted)" }, ...scheduleNotFound },
  }),
  async (c) => {
    const { key, id } = c.req.valid("param");
    await deleteScheduledChange(c.env, c.get("principal").teamId, key, id);
    return c.body(null, 204);
  },
);

const InsightsSchema = z
  .object({
    flag: z.string(),
    last_evaluated_at: z.string().nullable(),
    hours: z.array(z.object({ environment: z.string(), hour: z.string(), variant: z.string(), evaluations: z.number().int(), exposures: z.number().int() })),
  })
  .openapi("FlagInsights");

flagsRouter.openapi(
  route({
    method: "get",
    path: "/{key}/insights",
    operationId: "getFlagInsights",
    scope: "flags:read",
    summary: "A flag's insights",
    description:
      "Evaluations per variant per hour (UTC, `YYYY-MM-DDTHH`) and environment, exposures tracked by clients, and `last_evaluated_at` (server-side evaluations and team-key tracks only). Counts reach the store within about 10 s; kept 90 days.",
    request: { params: KeyParam, query: z.object({ hours: z.coerce.number().int().min(1).max(2160).optional() }) },
    responses: { 200: dataResponse("Insights", InsightsSchema), ...flagNotFoundResponse },
  }),
  async (c) => c.json({ data: await flagInsights(c.env, c.get("principal").teamId, c.req.valid("param").key, c.req.valid("query").hours ?? 168) }, 200),
);

// A path no route serves gets the same check as the routes before its 404 or 405.
flagsRouter.use("*", ...route.unmatched("flags:read", "flags:write"));
