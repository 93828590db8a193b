// The surveys product's definition: everything the platform serves of it, declared once
// (docs/ARCHITECTURE.md "Adding a product"). src/products/index.ts lists it.
import { surveysPages } from "./console/surveys";
import { defineProduct } from "../../platform/products";
import { surveyPageRouter } from "./page/survey-page.routes";
import { SurveyStore } from "./store/survey-store";
import { surveysAdminRoutes } from "./surveys.admin.routes";
import { surveyWebhooksConsumer } from "./surveys.consumer";
import { surveyDeliveriesRetentionCron, surveyDeliveriesSweepCron } from "./surveys.cron";
import { surveyWebhooksQueue } from "./surveys.messages";
import { surveysPublicRouter } from "./surveys.public.routes";
import { surveysRouter } from "./surveys.routes";

export { SurveyStore };

declare module "../../platform/scopes" {
  interface ProductScopes {
    "surveys:read": true;
    "surveys:write": true;
  }
}
declare module "../../platform/plans" {
  interface ProductServices {
    surveys: true;
  }
}
declare module "../../platform/rate-limit/buckets" {
  interface ProductBuckets {
    survey_start_ip: true;
  }
  interface ProductStrictFamilies {
    survey_start: true;
  }
}

export const surveys = defineProduct({
  name: "surveys",
  mounts: [
    { prefix: "/api/v1/surveys", router: surveysRouter },
    { prefix: "/api/v1/surveys", router: surveysPublicRouter },
    // The hosted survey page (/s/:slug) and its assets.
    { prefix: "", router: surveyPageRouter },
  ],
  operatorRoutes: surveysAdminRoutes,
  console: { pages: surveysPages, nav: { path: "surveys", label: "Surveys" } },
  queues: [surveyWebhooksQueue],
  consumers: [surveyWebhooksConsumer],
  crons: [surveyDeliveriesSweepCron],
  retention: [surveyDeliveriesRetentionCron],
  durableObjects: { SurveyStore },
  scopes: { label: "Surveys", names: ["surveys:read", "surveys:write"] },
  services: {
    surveys: {
      metric: "responses",
      label: "Survey responses",
      unit: "responses",
      limits: { free: 1_000, starter: 10_000, pro: 50_000, scale: 250_000, enterprise: null },
      visibleTo: ["surveys:read", "surveys:write"],
    },
  },
  rateLimits: {
    buckets: {
      /**
       * Survey starts of one team from one client network (docs/ARCHITECTURE.md "Survey starts"): at most 10 of
       * the team's 30 `survey_start` per window, so one machine cannot lock the team's surveys. An
       * extension of the specification's buckets, counted before the team's strict family.
       */
      survey_start_ip: 10,
    },
    strictFamilies: ["survey_start"],
  },
  tags: [
    { name: "Surveys", description: "Build surveys from sections and questions, activate, close, duplicate; results and webhooks." },
    { name: "Surveys (public)", description: "The respondent's flow: no credential, counted per client IP." },
  ],
});
