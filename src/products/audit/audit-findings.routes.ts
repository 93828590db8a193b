// Audit routes of findings: create, list, read and PATCH a finding, and record a verification.
import { z } from "@hono/zod-openapi";
import { jsonBody, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { addVerification, createFinding, getFinding, listFindings, updateFinding } from "./audit-findings.service";
import { BASE, ok, okPage, route, scopeOf } from "./audit.openapi";
import {
  AuditErrorSchema,
  CreateFindingBody,
  CreateVerificationBody,
  envelope,
  Finding,
  FindingDetail,
  FindingParams,
  ListFindingsQuery,
  ListMeta,
  PatchFindingBody,
  ProjectParams,
  Verification,
} from "./audit.schemas";

export const auditFindingsRouter = createRouter();

auditFindingsRouter.openapi(
  route({
    method: "post",
    path: `${BASE}/findings`,
    operationId: "createAuditFinding",
    summary: "Create a finding",
    description: "A finding starts its status history with its initial status (default `new`). `priority_score` weighs it in the risk burn-down.",
    scope: "audit:write",
    idempotent: true,
    request: { params: ProjectParams, body: jsonBody(CreateFindingBody, { title: "XSS in search", priority_score: 7 }) },
    responses: { 201: jsonResponse("The finding", envelope(Finding)) },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(ok(c, await createFinding(c.env, scopeOf(c, project_id), c.req.valid("json"))), 201);
  },
);

auditFindingsRouter.openapi(
  route({
    method: "get",
    path: `${BASE}/findings`,
    operationId: "listAuditFindings",
    summary: "List findings",
    description: "Newest first; optional `status` filter; `page` (1-based) and `per_page` (default 50, max 100). `meta.pagination` carries the totals.",
    scope: "audit:read",
    request: { params: ProjectParams, query: ListFindingsQuery },
    responses: {
      200: jsonResponse("Findings", z.object({ data: z.array(Finding), meta: ListMeta, error: z.null() })),
    },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    const query = c.req.valid("query");
    const { items, total } = await listFindings(c.env, scopeOf(c, project_id), query);
    return c.json(okPage(c, items, total, query), 200);
  },
);

auditFindingsRouter.openapi(
  route({
    method: "get",
    path: `${BASE}/findings/{id}`,
    operationId: "getAuditFinding",
    summary: "Get a finding with its status history and verifications",
    description:
      "Requires `audit:read`. The finding with its status history (which the burn-down and the regression rate are computed from) and its verifications. Another team's or project's finding answers 404 `not_found` in the audit envelope.",
    scope: "audit:read",
    request: { params: FindingParams },
    responses: { 200: jsonResponse("The finding", envelope(FindingDetail)) },
  }),
  async (c) => {
    const { project_id, id } = c.req.valid("param");
    return c.json(ok(c, await getFinding(c.env, scopeOf(c, project_id), id)), 200);
  },
);

auditFindingsRouter.openapi(
  route({
    method: "patch",
    path: `${BASE}/findings/{id}`,
    operationId: "updateAuditFinding",
    summary: "Change a finding's status, priority or title",
    description:
      "Each change of `status` or `priority_score` appends to the status history, which the burn-down reads. Moving from `resolved` or `dismissed` back to a non-terminal status makes the finding a regression while it stays non-terminal. A concurrent change of the same finding answers 409 `conflict`.",
    scope: "audit:write",
    request: { params: FindingParams, body: jsonBody(PatchFindingBody, { status: "triaged" }) },
    responses: {
      200: jsonResponse("The finding", envelope(FindingDetail)),
      409: jsonResponse("`conflict`: changed concurrently", AuditErrorSchema),
    },
  }),
  async (c) => {
    const { project_id, id } = c.req.valid("param");
    return c.json(ok(c, await updateFinding(c.env, scopeOf(c, project_id), id, c.req.valid("json"))), 200);
  },
);

auditFindingsRouter.openapi(
  route({
    method: "post",
    path: `${BASE}/findings/{id}/verifications`,
    operationId: "createAuditFindingVerification",
    summary: "Record a verification of a finding",
    description: "`result` is `passed` or `failed`; the summary's `verification_pass_rate` is passed over all verifications of the project.",
    scope: "audit:write",
    request: { params: FindingParams, body: jsonBody(CreateVerificationBody, { result: "passed", note: "Fixed in release 2.4" }) },
    responses: { 201: jsonResponse("The verification", envelope(Verification)) },
  }),
  async (c) => {
    const { project_id, id } = c.req.valid("param");
    return c.json(ok(c, await addVerification(c.env, scopeOf(c, project_id), id, c.req.valid("json"))), 201);
  },
);
