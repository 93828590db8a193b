// Authenticated routes of a survey's sections: list, create, update, delete.
import { createRoute, z } from "@hono/zod-openapi";
import { dataResponse, jsonBody } from "../../platform/openapi";
import { bearerSecurity, createRouter } from "../../platform/router";
import { createSection, deleteSection, listSections, updateSection } from "./survey-sections.service";
import { errors, read, tags, write } from "./surveys.openapi";
import { CreateSectionBody, PatchSectionBody, SectionParams, SectionSchema, SurveyIdParam2 } from "./surveys.schemas";

export const surveySectionsRouter = createRouter();

surveySectionsRouter.openapi(
  createRoute({
    method: "get",
    path: "/{survey_id}/sections",
    operationId: "listSurveySections",
    tags,
    summary: "List sections",
    description: "Ordered by `position`.",
    security: bearerSecurity,
    middleware: read,
    request: { params: SurveyIdParam2 },
    responses: { 200: dataResponse("Sections", z.array(SectionSchema)), ...errors },
  }),
  async (c) => c.json({ data: await listSections(c.env, c.get("principal").teamId, c.req.valid("param").survey_id) }, 200),
);

surveySectionsRouter.openapi(
  createRoute({
    method: "post",
    path: "/{survey_id}/sections",
    operationId: "createSurveySection",
    tags,
    summary: "Create a section",
    security: bearerSecurity,
    middleware: write,
    request: { params: SurveyIdParam2, body: jsonBody(CreateSectionBody) },
    responses: { 201: dataResponse("The section", SectionSchema), ...errors },
  }),
  async (c) => c.json({ data: await createSection(c.env, c.get("principal").teamId, c.req.valid("param").survey_id, c.req.valid("json")) }, 201),
);

surveySectionsRouter.openapi(
  createRoute({
    method: "patch",
    path: "/{survey_id}/sections/{section_id}",
    operationId: "updateSurveySection",
    tags,
    summary: "Update a section",
    security: bearerSecurity,
    middleware: write,
    request: { params: SectionParams, body: jsonBody(PatchSectionBody) },
    responses: { 200: dataResponse("The section", SectionSchema), ...errors },
  }),
  async (c) => {
    const { survey_id, section_id } = c.req.valid("param");
    return c.json({ data: await updateSection(c.env, c.get("principal").teamId, survey_id, section_id, c.req.valid("json")) }, 200);
  },
);

surveySectionsRouter.openapi(
  createRoute({
    method: "delete",
    path: "/{survey_id}/sections/{section_id}",
    operationId: "deleteSurveySection",
    tags,
    summary: "Delete a section",
    description: "The section's questions are kept with `section_id` null.",
    security: bearerSecurity,
    middleware: write,
    request: { params: SectionParams },
    responses: { 204: { description: "Deleted" }, ...errors },
  }),
  async (c) => {
    const { survey_id, section_id } = c.req.valid("param");
    await deleteSection(c.env, c.get("principal").teamId, survey_id, section_id);
    return c.body(null, 204);
  },
);
