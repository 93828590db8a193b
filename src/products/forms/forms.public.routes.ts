// The public side of Forms at {APP_URL}/f: `POST /f/:form_id` (no credential; urlencoded,
// multipart or JSON), its CORS preflight, the hosted thank-you page and the 5-minute signed file
// links of webhooks and mails. Each request counts in the per-IP `public` bucket first, unknown
// forms included; a post then meets, in order: the form (404 unknown or disabled), the Origin rule
// (403 ORIGIN_NOT_ALLOWED), the cap per form and client network (forms.limits.ts), the body's
// limits and fields (413, 415, 400, 422), the honeypot, the quota (429) and the store. A JSON body
// or `Accept: application/json` gets JSON; a browser form post gets a 303 or an HTML page.
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { settings } from "../../platform/config";
import { ApiError, type ErrorFormatter } from "../../platform/errors";
import { jsonResponse, productRoutes } from "../../platform/openapi";
import { backgroundOf } from "../../platform/request-context";
import { countBeside, enforceBucket, ipKey, refuseRemembered, type CountNetwork } from "../../platform/rate-limit/middleware";
import { createRouter } from "../../platform/router";
import { z } from "@hono/zod-openapi";
import { refusedPage, thanksPage, VISITOR_PAGE_HEADERS } from "./forms.pages";
import { IntakeError, readIntake, type FieldProblem } from "./forms.intake";
import { admitPost } from "./forms.limits";
import { MAX_FILES_BYTES, PublicErrorSchema, PublicOkSchema } from "./forms.schemas";
import { findPublicForm, type PublicForm } from "./forms.service";
import { submitForm } from "./forms-submit.service";
import { submissionFile } from "./forms-submissions.service";
import { verifyFileLink } from "./forms.files";
import { formStore } from "./forms.store";

/** Public codes of the platform's errors, as the public answers name them. */
const PUBLIC_CODES: Partial<Record<ApiError["code"], string>> = {
  not_found: "FORM_NOT_FOUND",
  payload_too_large: "PAYLOAD_TOO_LARGE",
  unsupported_media_type: "UNSUPPORTED_MEDIA_TYPE",
  bad_request: "MALFORMED_BODY",
  method_not_allowed: "METHOD_NOT_ALLOWED",
  unavailable: "UNAVAILABLE",
};

/** The public error body `{ok: false, error, code}`; the quota's 429 keeps the specification's body. */
export const formsPublicErrorFormat: ErrorFormatter = (error) =>
  error.code === "monthly_quota" ? { error: error.message } : { ok: false, error: error.message, code: PUBLIC_CODES[error.code] ?? error.code.toUpperCase() };

const route = productRoutes({ tags: ["Forms (public)"], security: "public" });

export const formsPublicRouter = createRouter({ errorFormat: formsPublicErrorFormat });

const FormIdParam = z.object({ form_id: z.string().openapi({ param: { name: "form_id", in: "path" }, description: "The form's id." }) });

const perIp = (c: Context<AppEnv>) => enforceBucket(c, "public", ipKey(c));

/** True when the caller reads JSON: a JSON body, or JSON accepted. */
function wantsJson(c: Context<AppEnv>): boolean {
  return (c.req.header("content-type") ?? "").toLowerCase().startsWith("application/json") || (c.req.header("accept") ?? "").includes("application/json");
}

/** The Origin sent is one the form admits: any when its list is empty. */
function originAllowed(form: PublicForm, origin: string): boolean {
  return form.allowedOrigins.length === 0 || form.allowedOrigins.includes(origin);
}

/** CORS headers for a browser's JSON post from an admitted origin. */
function corsHeaders(form: PublicForm | null, origin: string | undefined): Record<string, string> {
  if (!form || !origin || !originAllowed(form, origin)) return {};
  return { "access-control-allow-origin": origin, vary: "Origin" };
}

/**
 * Where a browser goes after an accepted post: `_next` when its origin is the redirect URL's or
 * one of `allowed_origins` (never elsewhere: no open redirect), else the redirect URL, else the
 * hosted thank-you page.
 */
export function redirectTarget(appUrl: string, form: Pick<PublicForm, "id" | "allowedOrigins" | "redirectUrl">, next: string | null): string {
  if (next) {
    try {
      const url = new URL(next);
      const trusted = new Set(form.allowedOrigins);
      if (form.redirectUrl) trusted.add(new URL(form.redirectUrl).origin);
      if ((url.protocol === "https:" || url.protocol === "http:") && !url.username && !url.password && trusted.has(url.origin)) return url.toString();
    } catch {
      // not a URL: ignored
    }
  }
  return form.redirectUrl ?? `${appUrl}/f/${form.id}/thanks`;
}

formsPublicRouter.openapi(
  route({
    method: "post",
    path: "/{form_id}",
    operationId: "submitForm",
    summary: "Submit a form (public)",
    description:
      "No credential; the `public` bucket (200 requests per 60 s per client IP), then at most 10 posts a minute per form and client network (IPv6: a /64) and a daily share per team and network (README). Bodies: `application/x-www-form-urlencoded` or `application/json` up to 1 MB, or `multipart/form-data` read as a stream (text up to 1 MB, files up to the form's `files.max_bytes`, at most 10 MB). Fields starting with `_` are instructions, never stored: `_next` (where a browser goes next: only to the redirect URL's origin or an allowed origin), `_subject`, `_replyto`, `_gotcha` (the honeypot: filled, the post answers as a success and is kept as spam, with no unit, mail or webhook). A repeated name is stored as a list. A JSON body or `Accept: application/json` gets JSON: 200 `{ok: true, id}` or 422 `{ok: false, errors: [{field, code, message}]}`; a browser post gets 303 to `_next`, the redirect URL or the hosted thank-you page, or an HTML page saying what to fix. A browser `Origin` outside a non-empty `allowed_origins` (`null` too) answers 403 `ORIGIN_NOT_ALLOWED`. Each accepted submission spends one `submissions` unit (monthly-quota 429 when none is left).",
    body: { own: MAX_FILES_BYTES },
    request: { params: FormIdParam },
    responses: {
      200: jsonResponse("Accepted (JSON callers)", PublicOkSchema),
      303: { description: "Accepted (browser form posts): to `_next`, the redirect URL or the thank-you page" },
      400: jsonResponse("Malformed body (MALFORMED_BODY)", PublicErrorSchema),
      403: jsonResponse("Origin not allowed (ORIGIN_NOT_ALLOWED)", PublicErrorSchema),
      404: jsonResponse("Unknown or disabled form (FORM_NOT_FOUND)", PublicErrorSchema),
      413: jsonResponse("Body over 1 MB without files, or files over the form's max_bytes (FILES_TOO_BIG)", PublicErrorSchema),
      415: jsonResponse("Not urlencoded, multipart or JSON", PublicErrorSchema),
      422: jsonResponse(
        "Fields to fix: REQUIRED_FIELD_MISSING, TYPE_EMAIL, TYPE_NUMBER, TYPE_URL, TOO_LONG, TOO_MANY_FIELDS, FILES_TOO_BIG, FILES_NOT_ALLOWED",
        PublicErrorSchema,
      ),
      429: jsonResponse("Public bucket, the form's cap for the client network, or the monthly quota", z.object({ error: z.string() })),
    },
  }),
  async (c) => {
    const json = wantsJson(c);
    const origin = c.req.header("origin");
    let form: PublicForm | null = null;
    try {
      // A network this isolate knows refused is answered at once. The per-IP bucket is counted once
      // the form is known (its look-up is the isolate's cache, but for the first post), with the
      // form's caps for the network in the same call and the unit beside it (admitPost); a post
      // refused before that is counted in the bucket alone, and its refusal comes first.
      const key = ipKey(c);
      refuseRemembered(c, "public", key);
      const count: CountNetwork = (caps) => countBeside(c, "public", key, caps);
      const refused = async (error: unknown) => (await count()) ?? error;
      form = await findPublicForm(c.env, c.req.valid("param").form_id).catch(async (error: unknown) => {
        throw await refused(error);
      });
      if (origin !== undefined && !originAllowed(form, origin))
        throw await refused(new IntakeError(403, "ORIGIN_NOT_ALLOWED", "This form does not accept posts from this site (its origin is not allowed)"));
      const giveBack = await admitPost(c, form, count);
      const intake = await readIntake(c.req.raw, { enabled: form.filesEnabled, maxBytes: form.filesMaxBytes }).catch(async (error: unknown) => {
        await giveBack();
        throw error;
      });
      const accepted = await submitForm(c.env, form, intake, origin ?? null, backgroundOf(c), giveBack);
      if (json) return c.json({ ok: true as const, id: accepted.id }, 200, corsHeaders(form, origin));
      return c.redirect(redirectTarget(settings(c.env).appUrl, form, intake.next), 303);
    } catch (error) {
      return refusal(c, error, json, corsHeaders(form, origin));
    }
  },
);

/** The answer to a refused post: JSON in the public shape, or an HTML page for a browser. */
function refusal(c: Context<AppEnv>, error: unknown, json: boolean, cors: Record<string, string>): Response {
  if (error instanceof IntakeError) {
    if (json) {
      const body =
        error.status === 422
          ? { ok: false, errors: error.problems }
          : { ok: false, error: error.message, code: error.code, ...(error.problems.length ? { errors: error.problems } : {}) };
      return c.json(body, error.status, cors);
    }
    const title = error.status === 403 ? "The form was not sent" : "Please check the form";
    return c.body(refusedPage(title, error.message, error.problems), error.status, VISITOR_PAGE_HEADERS);
  }
  if (!(error instanceof ApiError) || json) {
    if (error instanceof ApiError) for (const [k, v] of Object.entries(cors)) c.header(k, v);
    throw error;
  }
  const problems: FieldProblem[] = [];
  const message =
    error.code === "rate_limited"
      ? "Too many posts from your network just now. Wait a minute and send the form again."
      : error.code === "monthly_quota"
        ? "This form cannot take more submissions this month."
        : error.message;
  return c.body(refusedPage(error.code === "not_found" ? "Form not found" : "The form was not sent", message, problems), error.status, {
    ...VISITOR_PAGE_HEADERS,
    ...error.headers,
  });
}

// The CORS preflight of a JSON post from a browser: admitted origins only, counted like a post.
formsPublicRouter.options("/:form_id", async (c) => {
  await perIp(c);
  const form = await findPublicForm(c.env, c.req.param("form_id"));
  const origin = c.req.header("origin");
  const cors = corsHeaders(form, origin);
  if (!cors["access-control-allow-origin"]) return c.body(null, 204);
  return c.body(null, 204, {
    ...cors,
    "access-control-allow-methods": "POST",
    "access-control-allow-headers": "Content-Type, Accept",
    "access-control-max-age": "600",
  });
});

formsPublicRouter.openapi(
  route({
    method: "get",
    path: "/{form_id}/thanks",
    operationId: "formThanksPage",
    summary: "Hosted thank-you page",
    description: "Where a browser lands after a post when neither `_next` nor the form's `redirect_url` applies. HTML in the console's look, no script.",
    request: { params: FormIdParam },
    responses: { 200: { description: "The page", content: { "text/html": { schema: z.string() } } } },
  }),
  async (c) => {
    await perIp(c);
    let form: PublicForm;
    try {
      form = await findPublicForm(c.env, c.req.valid("param").form_id);
    } catch (error) {
      if (error instanceof ApiError && error.code === "not_found") {
        return c.body(refusedPage("Form not found", "This form does not exist or no longer takes submissions.", []), 404, VISITOR_PAGE_HEADERS);
      }
      throw error;
    }
    return c.body(thanksPage(form.name), 200, VISITOR_PAGE_HEADERS);
  },
);

formsPublicRouter.openapi(
  route({
    method: "get",
    path: "/{form_id}/files/{token}",
    operationId: "downloadFormFileByLink",
    summary: "A submission's file by signed link",
    description:
      "The 5-minute link a webhook delivery or a notification mail carries. Always an attachment (`application/octet-stream`, `nosniff`, `Content-Security-Policy: sandbox`); an expired or altered link answers 404.",
    request: {
      params: FormIdParam.extend({
        token: z
          .string()
          .max(2000)
          .openapi({ param: { name: "token", in: "path" } }),
      }),
    },
    responses: { 200: { description: "The file" }, 404: jsonResponse("Unknown, expired or altered link", PublicErrorSchema) },
  }),
  async (c) => {
    await perIp(c);
    const { form_id, token } = c.req.valid("param");
    const claim = await verifyFileLink(c.env, form_id, token);
    if (!claim) throw ApiError.notFound("This link is unknown or has expired");
    const submission = await formStore(c.env, form_id).get(claim.submissionId);
    if (!submission) throw ApiError.notFound("File not found");
    return submissionFile(c.env, { id: form_id }, submission, claim.fileId);
  },
);
