// Authenticated routes of a survey's sections: list, create, update, delete.
import { z } from "@hono/zod-openapi";
import { dataResponse, jsonBody } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { createSection, deleteSection, listSections, updateSection } from "./survey-sections.service";
import { route } from "./surveys.openapi";
import { CreateSectionBody, PatchSectionBody, SectionParams, SectionSchema, SurveyIdParam2 } from "./surveys.schemas";

export const surveySectionsRouter = createRouter();

surveySectionsRouter.openapi(
  route({
    method: "get",
    path: "/{survey_id}/sections",
    operationId: "listSurveySections",
    summary: "List sections",
    description: "Ordered by `position`.",
    scope: "surveys:read",
    request: { params: SurveyIdParam2 },
    responses: { 200: dataResponse("Sections", z.array(SectionSchema)) },
  }),
  async (c) => c.json({ data: await listSections(c.env, c.get("principal").teamId, c.req.valid("param").survey_id) }, 200),
);

surveySectionsRouter.openapi(
  route({
    method: "post",
    path: "/{survey_id}/sections",
    operationId: "createSurveySection",
    summary: "Create a section",
    description:
      "Requires `surveys:write`. `position` (1-based) is required; `title` and `description` are optional. At most 50 sections per survey (422 past it).",
    scope: "surveys:write",
    request: { params: SurveyIdParam2, body: jsonBody(CreateSectionBody, { title: "About you", position: 1 }) },
    responses: { 201: dataResponse("The section", SectionSchema) },
  }),
  async (c) => c.json({ data: await createSection(c.env, c.get("principal").teamId, c.req.valid("param").survey_id, c.req.valid("json")) }, 201),
);

surveySectionsRouter.openapi(
  route({
    method: "patch",
    path: "/{survey_id}/sections/{section_id}",
    operationId: "updateSurveySection",
    summary: "Update a section",
    description: "Requires `surveys:write`. Changes `title`, `description` or `position`; only the fields sent change.",
    scope: "surveys:write",
    request: { params: SectionParams, body: jsonBody(PatchSectionBody, { title: "About your team" }) },
    responses: { 200: dataResponse("The section", SectionSchema) },
  }),
  async (c) => {
    const { survey_id, section_id } = c.req.valid("param");
    return c.json({ data: await updateSection(c.env, c.get("principal").teamId, survey_id, section_id, c.req.valid("json")) }, 200);
  },
);

surveySectionsRouter.openapi(
  route({
    method: "delete",
    path: "/{survey_id}/sections/{section_id}",
    operationId: "deleteSurveySection",
    summary: "Delete a section",
    description: "The section's questions are kept with `section_id` null.",
    scope: "surveys:write",
    request: { params: SectionParams },
    responses: { 204: { description: "Deleted" } },
  }),
  async (c) => {
    const { survey_id, section_id } = c.req.valid("param");
    await deleteSection(c.env, c.get("principal").teamId, survey_id, section_id);
    return c.body(null, 204);
  },
);
