// The respondent-facing pages served by the Worker: the hosted survey at {APP_URL}/s/:slug, its
// client script, and the embed widget at {APP_URL}/embed.js. Unknown and draft slugs answer a
// clear 404 page; closed surveys a clear 410 page; neither is an error dump.
import { Hono } from "hono";
import type { AppEnv } from "../../../env";
import { getDb } from "../../../db/client";
import { ApiError } from "../../../platform/errors";
import { rateLimit } from "../../../platform/rate-limit/middleware";
import { findPublicSurvey, publicDefinition } from "../survey-responses.service";
import { EMBED_SCRIPT } from "./embed-script";
import { noticePage, surveyPage } from "./page-html";
import { PAGE_SCRIPT } from "./page-script";
import { resolveSettings } from "./survey-settings";

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors *",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};

const SCRIPT_HEADERS = {
  "content-type": "text/javascript; charset=utf-8",
  "cache-control": "public, max-age=300",
  "x-content-type-options": "nosniff",
  "access-control-allow-origin": "*",
};

export const surveyPageRouter = new Hono<AppEnv>();

surveyPageRouter.get("/embed.js", (c) => c.body(EMBED_SCRIPT, 200, SCRIPT_HEADERS));
surveyPageRouter.get("/s/_/survey.js", (c) => c.body(PAGE_SCRIPT, 200, SCRIPT_HEADERS));

// Page views are public traffic: counted per client IP in the `public` bucket.
surveyPageRouter.get("/s/:slug", rateLimit({ bucket: "public" }), async (c) => {
  const slug = c.req.param("slug");
  const db = getDb(c.env.DB);
  const survey = await findPublicSurvey(db, slug).catch((error: unknown) => {
    if (error instanceof ApiError && error.code === "not_found") return null;
    throw error;
  });
  if (!survey) {
    return c.body(noticePage("Survey not found", "This survey does not exist or is no longer available.", resolveSettings({})), 404, PAGE_HEADERS);
  }
  const settings = resolveSettings(survey.settings);
  if (survey.status !== "active") {
    return c.body(noticePage(survey.name, "This survey is closed and no longer accepts responses. Thank you for your interest.", settings), 410, PAGE_HEADERS);
  }
  const definition = await publicDefinition(db, survey);
  const apiBase = "/api/v1";
  return c.body(surveyPage({ name: survey.name, slug: survey.slug, questionCount: definition.question_count }, settings, apiBase), 200, PAGE_HEADERS);
});
