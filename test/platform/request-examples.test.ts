// Every request example of the OpenAPI document (what the reference shows and its "Send" sends)
// succeeds as sent, with the credential the operation declares: a key like `npm start`'s demo key
// (every scope, pro plan, example.com verified), a project's ingest token, the operator token, or
// none. Operations run in the order a newcomer would, so the ids in each path come from the
// resources the earlier examples created. The only edits to a body are the ids it must name
// (QUESTION_ID, the question the example created; SITE_ID, the analytics site): no static example can know them.
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, json, setupTeam } from "../helpers/api";

interface Operation {
  operationId: string;
  security?: Array<Record<string, string[]>>;
  requestBody?: { content: Record<string, { example?: unknown; schema?: { example?: unknown } }> };
  responses: Record<string, unknown>;
}

/** The operations in the order they run, with where their path parameters come from. */
const ORDER = [
  "createLogProject",
  "createLogAlert",
  "updateLogAlert",
  "ingestLogEntry",
  "ingestLogBatch",
  "createWebhookSource",
  "updateWebhookSource",
  "createWebhookDestination",
  "replayWebhookEvent",
  "updateWebhookDestination",
  "createDomain",
  "createMailWebhook",
  "sendEmail",
  "sendEmailBatch",
  "createPushApp",
  "updatePushApp",
  "createPushSubscriber",
  "sendPushNotification",
  "createSurvey",
  "updateSurvey",
  "createSurveySection",
  "updateSurveySection",
  "createSurveyQuestion",
  "updateSurveyQuestion",
  "reorderSurveyQuestions",
  "createSurveyWebhook",
  "startSurveyResponse",
  "answerSurveyQuestion",
  "goBackInSurveyResponse",
  "createForm",
  "updateForm",
  "createAuditFinding",
  "updateAuditFinding",
  "createAuditFindingVerification",
  "shareAuditReport",
  "exportAuditReport",
  "createAnalyticsSite",
  "updateAnalyticsSite",
  "queryAnalytics",
  "createFlag",
  "updateFlag",
  "revertFlag",
  "scheduleFlagChange",
  "createFlagSegment",
  "updateFlagSegment",
  "createFlagEnvironment",
  "createFlagClientKey",
  "evaluateFlags",
  "bootstrapFlags",
  "trackFlagEvents",
  "clientBootstrapFlags",
  "clientTrackFlagEvents",
  "createAuditScan",
  "createAuditScanSchedule",
  "createTeamApiKey",
  "createTeam",
  "updateTeam",
  "createApiKey",
  "updateApiKey",
  "addTeamDomain",
  "addTeamMember",
  "createSignInLink",
  "adminMigrateLogEntries",
  "adminMigratePushStores",
  "adminMigrateSurveyResponses",
  "adminMigrateMailBodies",
  "adminMigrateRelayEvents",
] as const;

async function hmacHex(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("request examples of the OpenAPI document", () => {
  it("every operation with a body has an example, and each succeeds as sent", async () => {
    const doc = await json(await call("GET", "openapi.json"));
    const operations = new Map<string, { method: string; path: string; op: Operation }>();
    for (const [path, item] of Object.entries<Record<string, Operation>>(doc.paths)) {
      for (const [method, op] of Object.entries(item)) operations.set(op.operationId, { method, path, op });
    }
    const withBody = [...operations.values()].filter(({ op }) => op.requestBody).map(({ op }) => op.operationId);
    expect(withBody.filter((id) => !(ORDER as readonly string[]).includes(id))).toEqual([]);

    const team = await setupTeam({ plan: "pro", domains: ["example.com"] });
    const ids: Record<string, string> = { org_id: team.teamId, project_id: "web" };
    let ingestToken = "";
    // The keys API needs keys:write, which the demo key never holds (its description says so).
    let keysKey = "";
    let flagsClientKey = "";

    // Resource ids each answer adds, by operation.
    const captures: Partial<Record<(typeof ORDER)[number], (data: any) => void>> = {
      createLogProject: (d) => ((ids.project = d.id), (ingestToken = d.ingest_token)),
      createLogAlert: (d) => (ids.alert = d.id),
      createWebhookSource: (d) => ((ids.source_id = d.id), (ids.source_slug = d.slug)),
      createWebhookDestination: (d) => (ids.destination_id = d.id),
      createPushApp: (d) => (ids.app_id = d.id),
      createSurvey: (d) => ((ids.survey = ids.survey_id = d.id), (ids.slug = d.slug)),
      createSurveySection: (d) => (ids.section_id = d.id),
      createSurveyQuestion: (d) => (ids.question_id = d.id),
      startSurveyResponse: (d) => (ids.response_id = d.id),
      createAuditFinding: (d) => (ids.finding = d.id),
      createTeam: (d) => (ids.team = d.id),
      createApiKey: (d) => (ids.key = d.id),
      createForm: (d) => (ids.form = d.id),
      createAnalyticsSite: (d) => (ids.site = d.id),
      createFlagClientKey: (d) => (flagsClientKey = d.key),
    };
    // What `{id}`-like parameters mean for each operation.
    const params: Partial<Record<(typeof ORDER)[number], () => Record<string, string>>> = {
      createLogAlert: () => ({ id: ids.project }),
      updateLogAlert: () => ({ id: ids.alert }),
      updateSurvey: () => ({ id: ids.survey }),
      createSurveyWebhook: () => ({ id: ids.survey }),
      startSurveyResponse: () => ({ survey: ids.slug }),
      answerSurveyQuestion: () => ({ slug: ids.slug }),
      goBackInSurveyResponse: () => ({ slug: ids.slug }),
      updateAuditFinding: () => ({ id: ids.finding }),
      createAuditFindingVerification: () => ({ id: ids.finding }),
      updateTeam: () => ({ id: ids.team }),
      createApiKey: () => ({ id: ids.team }),
      updateApiKey: () => ({ id: ids.key }),
      addTeamDomain: () => ({ id: ids.team }),
      addTeamMember: () => ({ id: ids.team }),
      updateForm: () => ({ id: ids.form }),
      updateAnalyticsSite: () => ({ id: ids.site }),
      updateFlag: () => ({ key: "new-checkout" }),
      revertFlag: () => ({ key: "new-checkout" }),
      scheduleFlagChange: () => ({ key: "new-checkout" }),
      updateFlagSegment: () => ({ key: "beta-testers" }),
      createFlagClientKey: () => ({ env: "production" }),
    };
    // Steps between examples that no example covers: a signed event to replay, an active survey.
    const before: Partial<Record<(typeof ORDER)[number], () => Promise<void>>> = {
      replayWebhookEvent: async () => {
        const body = JSON.stringify({ type: "order.created", id: "o_1" });
        const res = await call("POST", `/in/${ids.source_slug}`, {
          raw: body,
          headers: { "content-type": "application/json", "x-signature": await hmacHex("whsec_example_secret", body) },
        });
        expect(res.status).toBe(202);
        const events = await json(await call("GET", `webhooks/sources/${ids.source_id}/events`, { key: team.key }));
        ids.event_id = events.data[0].id;
      },
      createTeamApiKey: async () => {
        const res = await call("POST", `admin/teams/${team.teamId}/keys`, {
          key: ADMIN_TOKEN,
          body: { name: "keys", scopes: ["keys:write", "logs:read", "logs:write"] },
        });
        expect(res.status).toBe(201);
        keysKey = (await json(res)).data.key;
      },
      startSurveyResponse: async () => {
        expect((await call("POST", `surveys/${ids.survey}/activate`, { key: team.key })).status).toBe(200);
      },
    };

    const results: string[] = [];
    for (const operationId of ORDER) {
      const entry = operations.get(operationId);
      expect(entry, operationId).toBeDefined();
      const { method, path, op } = entry!;
      await before[operationId]?.();
      const [type, media] = Object.entries(op.requestBody!.content)[0];
      const example = media.example ?? media.schema?.example;
      expect(example, `${operationId} has an example`).toBeDefined();
      const named = { ...ids, ...params[operationId]?.() };
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => {
        expect(named[name], `${operationId}: {${name}}`).toBeDefined();
        return named[name];
      });
      const raw =
        typeof example === "string"
          ? example
          : JSON.stringify(example)
              .replaceAll("QUESTION_ID", ids.question_id ?? "")
              .replaceAll("SITE_ID", ids.site ?? "");
      const scheme = Object.keys(op.security?.[0] ?? {})[0];
      const key =
        operationId === "createTeamApiKey"
          ? keysKey
          : scheme === "bearerAuth"
            ? team.key
            : scheme === "adminToken"
              ? ADMIN_TOKEN
              : scheme === "ingestToken"
                ? ingestToken
                : scheme === "flagsClientKey"
                  ? flagsClientKey
                  : null;
      const res = await call(method.toUpperCase(), url, { key, raw, headers: { "content-type": type } });
      const text = await res.text();
      results.push(`${operationId} ${res.status}${res.status >= 300 ? ` ${text}` : ""}`);
      if (res.status >= 200 && res.status < 300) {
        expect(Object.keys(op.responses), operationId).toContain(String(res.status));
        const body = text ? JSON.parse(text) : null;
        captures[operationId]?.(body?.data);
      }
    }
    expect(results.filter((line) => !/ 2\d\d$/.test(line))).toEqual([]);
  });
});
