// Authenticated Forms routes under /api/v1/forms (`forms:read` / `forms:write`): the forms, their
// submissions (list, read, delete, spam / not-spam, CSV export, files) and the webhook's
// deliveries with the re-send. Every route loads the form for the caller's team first: another
// team's ids answer 404.
import { z } from "@hono/zod-openapi";
import { dataResponse, jsonBody, jsonResponse, productRoutes } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import {
  CreatedFormSchema,
  CreateFormBody,
  DeliverySchema,
  FileParam,
  FormErrorSchema,
  FormParam,
  FormSchema,
  PatchFormBody,
  SubmissionListQuery,
  SubmissionPageSchema,
  SubmissionParam,
  SubmissionSchema,
} from "./forms.schemas";
import { createForm, deleteForm, getForm, listForms, patchForm } from "./forms.service";
import {
  deleteSubmission,
  exportSubmissions,
  getSubmission,
  getSubmissionFile,
  listDeliveries,
  listSubmissions,
  moveSubmission,
  resendSubmission,
} from "./forms-submissions.service";

const route = productRoutes({
  tags: ["Forms"],
  security: "bearer",
  errorBody: FormErrorSchema,
  errors: {
    404: jsonResponse("Form or submission not found (also for another team's ids)", FormErrorSchema),
    422: jsonResponse("Validation failed", FormErrorSchema),
  },
});

export const formsRouter = createRouter();
const team = (c: { get(key: "principal"): { teamId: string } }) => c.get("principal").teamId;

formsRouter.openapi(
  route({
    method: "post",
    path: "/",
    operationId: "createForm",
    summary: "Create a form",
    description:
      "`endpoint` is where an HTML form posts (`{APP_URL}/f/<id>`). `webhook_url` must pass the SSRF guard; its signing secret (`webhook_secret`, Standard Webhooks) is answered only here. `notify_emails` must be accepted members of the team. At most 100 forms per team.",
    scope: "forms:write",
    idempotent: true,
    request: { body: jsonBody(CreateFormBody, { name: "Contact", fields: [{ name: "email", type: "email", required: true, max_length: 320 }] }) },
    responses: { 201: dataResponse("The form, with its webhook secret", CreatedFormSchema) },
  }),
  async (c) => c.json({ data: await createForm(c.env, team(c), c.req.valid("json")) }, 201),
);

formsRouter.openapi(
  route({
    method: "get",
    path: "/",
    operationId: "listForms",
    summary: "List forms",
    description: "Every form of the team, oldest first, with its inbox and spam counts.",
    scope: "forms:read",
    responses: { 200: dataResponse("The forms", z.array(FormSchema)) },
  }),
  async (c) => c.json({ data: await listForms(c.env, team(c)) }, 200),
);

formsRouter.openapi(
  route({
    method: "get",
    path: "/{id}",
    operationId: "getForm",
    summary: "Get a form",
    description: "The form with its endpoint and its inbox and spam counts; the webhook secret is never included.",
    scope: "forms:read",
    request: { params: FormParam },
    responses: { 200: dataResponse("The form", FormSchema) },
  }),
  async (c) => c.json({ data: await getForm(c.env, team(c), c.req.valid("param").id) }, 200),
);

formsRouter.openapi(
  route({
    method: "patch",
    path: "/{id}",
    operationId: "updateForm",
    summary: "Change a form",
    description:
      "Any field of the create. Setting a `webhook_url` on a form without one makes its secret, answered here once (`webhook_secret`); null removes the webhook and its secret.",
    scope: "forms:write",
    request: { params: FormParam, body: jsonBody(PatchFormBody, { enabled: false }) },
    responses: { 200: dataResponse("The form", CreatedFormSchema.partial({ webhook_secret: true })) },
  }),
  async (c) => c.json({ data: await patchForm(c.env, team(c), c.req.valid("param").id, c.req.valid("json")) }, 200),
);

formsRouter.openapi(
  route({
    method: "delete",
    path: "/{id}",
    operationId: "deleteForm",
    summary: "Delete a form",
    description: "Deletes the form, its submissions, their files and its webhook deliveries.",
    scope: "forms:write",
    request: { params: FormParam },
    responses: { 204: { description: "Deleted" } },
  }),
  async (c) => {
    await deleteForm(c.env, team(c), c.req.valid("param").id);
    return c.body(null, 204);
  },
);

formsRouter.openapi(
  route({
    method: "get",
    path: "/{id}/submissions",
    operationId: "listFormSubmissions",
    summary: "List submissions",
    description: "`status=inbox` (default) or `spam`, newest first; `cursor` from `pagination.next_cursor`, `limit` 1–100 (25).",
    scope: "forms:read",
    request: { params: FormParam, query: SubmissionListQuery },
    responses: { 200: jsonResponse("A page of submissions", SubmissionPageSchema) },
  }),
  async (c) => c.json(await listSubmissions(c.env, team(c), c.req.valid("param").id, c.req.valid("query")), 200),
);

formsRouter.openapi(
  route({
    method: "get",
    path: "/{id}/submissions/export",
    operationId: "exportFormSubmissions",
    summary: "Export the inbox as CSV",
    description: "RFC 4180, formulas neutralised (a cell starting with = + - @ gets a leading '), newest first, streamed.",
    scope: "forms:read",
    request: { params: FormParam },
    responses: { 200: { description: "CSV attachment", content: { "text/csv": { schema: z.string() } } } },
  }),
  async (c) => exportSubmissions(c.env, team(c), c.req.valid("param").id),
);

formsRouter.openapi(
  route({
    method: "get",
    path: "/{id}/submissions/{sid}",
    operationId: "getFormSubmission",
    summary: "Get a submission",
    description: "Its fields (a repeated name as a list), files (id, name, size), subject, reply-to, origin and status.",
    scope: "forms:read",
    request: { params: SubmissionParam },
    responses: { 200: dataResponse("The submission", SubmissionSchema) },
  }),
  async (c) => {
    const { id, sid } = c.req.valid("param");
    return c.json({ data: await getSubmission(c.env, team(c), id, sid) }, 200);
  },
);

formsRouter.openapi(
  route({
    method: "delete",
    path: "/{id}/submissions/{sid}",
    operationId: "deleteFormSubmission",
    summary: "Delete a submission",
    description: "With its files and webhook deliveries.",
    scope: "forms:write",
    request: { params: SubmissionParam },
    responses: { 204: { description: "Deleted" } },
  }),
  async (c) => {
    const { id, sid } = c.req.valid("param");
    await deleteSubmission(c.env, team(c), id, sid);
    return c.body(null, 204);
  },
);

for (const [path, status, operationId, summary] of [
  ["spam", "spam", "markFormSubmissionSpam", "Move a submission to spam"],
  ["not-spam", "inbox", "markFormSubmissionNotSpam", "Move a submission back to the inbox"],
] as const) {
  formsRouter.openapi(
    route({
      method: "post",
      path: `/{id}/submissions/{sid}/${path}`,
      operationId,
      summary,
      description: "Moving sends no mail or webhook and spends no unit.",
      scope: "forms:write",
      request: { params: SubmissionParam },
      responses: { 200: dataResponse("The submission", SubmissionSchema) },
    }),
    async (c) => {
      const { id, sid } = c.req.valid("param");
      return c.json({ data: await moveSubmission(c.env, team(c), id, sid, status) }, 200);
    },
  );
}

formsRouter.openapi(
  route({
    method: "get",
    path: "/{id}/submissions/{sid}/files/{file_id}",
    operationId: "downloadFormSubmissionFile",
    summary: "Download a submission's file",
    description:
      "Always an attachment with a sanitised name, `application/octet-stream`, `X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox`.",
    scope: "forms:read",
    request: { params: FileParam },
    responses: { 200: { description: "The file", content: { "application/octet-stream": { schema: z.string() } } } },
  }),
  async (c) => {
    const { id, sid, file_id } = c.req.valid("param");
    return getSubmissionFile(c.env, team(c), id, sid, file_id);
  },
);

formsRouter.openapi(
  route({
    method: "get",
    path: "/{id}/deliveries",
    operationId: "listFormWebhookDeliveries",
    summary: "Webhook deliveries",
    description: "The form's latest 50 webhook deliveries, newest first, each with every attempt (time, status code, latency, the answer's first 1 KB).",
    scope: "forms:read",
    request: { params: FormParam },
    responses: { 200: dataResponse("The deliveries", z.array(DeliverySchema)) },
  }),
  async (c) => c.json({ data: await listDeliveries(c.env, team(c), c.req.valid("param").id, null) }, 200),
);

formsRouter.openapi(
  route({
    method: "get",
    path: "/{id}/submissions/{sid}/deliveries",
    operationId: "listFormSubmissionDeliveries",
    summary: "A submission's webhook deliveries",
    description: "Every delivery of one submission (the first, and each re-send), newest first, with every attempt.",
    scope: "forms:read",
    request: { params: SubmissionParam },
    responses: { 200: dataResponse("The deliveries", z.array(DeliverySchema)) },
  }),
  async (c) => {
    const { id, sid } = c.req.valid("param");
    return c.json({ data: await listDeliveries(c.env, team(c), id, sid) }, 200);
  },
);

formsRouter.openapi(
  route({
    method: "post",
    path: "/{id}/submissions/{sid}/resend",
    operationId: "resendFormSubmission",
    summary: "Send a submission to the webhook again",
    description: "A new delivery, attempted at once and retried on the relay's schedule. 422 when the form has no webhook or the submission is in spam.",
    scope: "forms:write",
    idempotent: true,
    request: { params: SubmissionParam },
    responses: { 202: dataResponse("The new delivery", z.object({ delivery_id: z.string() })) },
  }),
  async (c) => {
    const { id, sid } = c.req.valid("param");
    return c.json({ data: await resendSubmission(c.env, team(c), id, sid) }, 202);
  },
);

formsRouter.use("*", ...route.unmatched("forms:read"));
