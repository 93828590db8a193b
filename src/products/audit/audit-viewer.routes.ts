// The public report viewer, outside /api/v1: `{APP_URL}/insights/audit/reports/shared/<token>`
// shows a shared report and mints a 5-minute download link, a signed path on this Worker that
// streams the artefact from R2 (never the bucket's own address). No credential: the signed token
// is the capability, and requests are counted per client IP in the `public` bucket. An unknown,
// expired, tampered or revoked token answers 404 with an HTML page.
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { createRouter } from "../../platform/router";
import { notFoundHtml, renderHtml } from "./audit.render";
import { mintDownloadUrl, resolveToken } from "./audit-share.service";
import { artefactHeaders, readArtefact, reportView } from "./audit.service";
import { jsonResponse, productRoutes, RateLimitErrorSchema } from "../../platform/openapi";

/** Headers of every viewer answer: never cached, never indexed, the token never leaked onwards. */
const PAGE_HEADERS = {
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-robots-tag": "noindex, nofollow",
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

const TokenParam = z.object({ token: z.string().openapi({ description: "The signed token." }) });
const html = (description: string) => ({ description, content: { "text/html": { schema: z.string() } } });

function notFound(c: Context<AppEnv>): Response {
  return c.html(notFoundHtml(), 404, PAGE_HEADERS);
}

/** The viewer's routes: no credential; each answer counts in the per-IP `public` bucket (429 beyond it). */
const route = productRoutes({
  tags: ["Audit (public viewer)"],
  security: "public",
  bucket: "public",
  errors: { 429: jsonResponse("Per-IP public bucket exceeded", RateLimitErrorSchema) },
});

export const auditViewerRouter = createRouter();

auditViewerRouter.openapi(
  route({
    method: "get",
    path: "/shared/{token}",
    operationId: "getSharedAuditReport",
    summary: "View a shared report",
    description:
      "Public page behind `share_url`: the report's metrics and burn-down chart, and a download link minted at this moment and valid 5 minutes. 404 page when the token is unknown, tampered, older than 48 hours, or the report is no longer shared.",
    request: { params: TokenParam },
    responses: { 200: html("The report page"), 404: html("Link invalid, expired or revoked") },
  }),
  async (c) => {
    const row = await resolveToken(c.env, c.req.valid("param").token, "audit_share");
    if (!row) return notFound(c);
    const download = await mintDownloadUrl(c.env, row);
    return c.html(renderHtml(reportView(row), { downloadUrl: download, context: "Shared audit report" }), 200, PAGE_HEADERS);
  },
);

auditViewerRouter.openapi(
  route({
    method: "get",
    path: "/download/{token}",
    operationId: "downloadSharedAuditReport",
    summary: "Download a shared report's artefact (5-minute link)",
    description: "Streams the artefact with its content type while the link is unexpired and the report still shared; otherwise the 404 page.",
    request: { params: TokenParam },
    responses: { 200: { description: "The artefact" }, 404: html("Link invalid, expired or revoked") },
  }),
  async (c) => {
    const row = await resolveToken(c.env, c.req.valid("param").token, "audit_download");
    const object = row ? await readArtefact(c.env, row) : null;
    if (!row || !object) return notFound(c);
    return new Response(object.body, {
      headers: {
        ...PAGE_HEADERS,
        ...artefactHeaders(row, object),
      },
    });
  },
);

// A path no route serves gets the same check as the routes before its 404 or 405.
auditViewerRouter.use("*", ...route.unmatched());
