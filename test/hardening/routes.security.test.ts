// Route-wide security, generated from the app's own OpenAPI document: every authenticated route
// refuses a missing key (401) and a key without its scope (403), answers another team's ids
// exactly like unknown ids (404), refuses an oversized body (413) before it looks at any
// credential, and no body ever carries a secret. A route that appears in the document without an
// entry in SCOPE_TABLE fails the suite. The scopes and the body limits the document states come
// from each route's declaration (`scope`, `body` of productRoutes, platform/route-access.ts), the
// same one that attaches the middleware: SCOPE_TABLE, written from the specification, checks the
// scopes; the 413 tests below send each route one byte more than the limit its document states.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { hasScope, keyScopes, specScopes, type Scope } from "../../src/platform/scopes";
import { ADMIN_TOKEN, anyIp, type RequestOptions } from "../helpers/api";
import {
  addKey,
  answerText,
  buildFixture,
  call,
  expectNoSecrets,
  fillPath,
  inPool,
  loadOperations,
  paramKind,
  resolve,
  routeKey,
  type Fixture,
  type Operation,
} from "./fixtures";

type Access = Scope[] | "ingest" | "admin" | "flagsClient";

/** Who may call each route: the accepted scopes (any one suffices), or the credential kind. */
const SCOPE_TABLE: Record<string, Access> = {
  "POST /api/v1/admin/teams": "admin",
  "GET /api/v1/admin/teams/{id}": "admin",
  "PATCH /api/v1/admin/teams/{id}": "admin",
  "POST /api/v1/admin/teams/{id}/keys": "admin",
  "PATCH /api/v1/admin/keys/{id}": "admin",
  "DELETE /api/v1/admin/keys/{id}": "admin",
  "POST /api/v1/admin/teams/{id}/domains": "admin",
  "POST /api/v1/admin/logs/migrate-entries": "admin",
  "POST /api/v1/admin/push/migrate-stores": "admin",
  "POST /api/v1/admin/surveys/migrate-responses": "admin",
  "POST /api/v1/admin/mail/migrate-bodies": "admin",
  "POST /api/v1/admin/relay/migrate-events": "admin",
  "POST /api/v1/admin/teams/{id}/members": "admin",
  "POST /api/v1/admin/sign-in-links": "admin",
  "GET /api/v1/keys": ["keys:read", "keys:write"],
  "POST /api/v1/keys": ["keys:write"],
  "DELETE /api/v1/keys/{id}": ["keys:write"],
  "GET /api/v1/usage": ["mail:send", "mail:read", "billing:read"],
  "GET /api/v1/requests": ["billing:read"],
  "POST /api/v1/orgs/{org_id}/projects/{project_id}/audit/findings": ["audit:write"],
  "GET /api/v1/orgs/{org_id}/projects/{project_id}/audit/findings": ["audit:read"],
  "GET /api/v1/orgs/{org_id}/projects/{project_id}/audit/findings/{id}": ["audit:read"],
  "PATCH /api/v1/orgs/{org_id}/projects/{project_id}/audit/findings/{id}": ["audit:write"],
  "POST /api/v1/orgs/{org_id}/projects/{project_id}/audit/findings/{id}/verifications": ["audit:write"],
  "GET /api/v1/orgs/{org_id}/projects/{project_id}/audit/reports/summary": ["audit:read"],
  "POST /api/v1/orgs/{org_id}/projects/{project_id}/audit/reports/export": ["audit:write"],
  "GET /api/v1/orgs/{org_id}/projects/{project_id}/audit/reports": ["audit:read"],
  "GET /api/v1/orgs/{org_id}/projects/{project_id}/audit/reports/{id}": ["audit:read"],
  "GET /api/v1/orgs/{org_id}/projects/{project_id}/audit/reports/{id}/download": ["audit:read"],
  "POST /api/v1/orgs/{org_id}/projects/{project_id}/audit/reports/share": ["audit:write"],
  "DELETE /api/v1/orgs/{org_id}/projects/{project_id}/audit/reports/share": ["audit:write"],
  "POST /api/v1/orgs/{org_id}/projects/{project_id}/audit/scans": ["audit:write"],
  "GET /api/v1/orgs/{org_id}/projects/{project_id}/audit/scans": ["audit:read"],
  "GET /api/v1/orgs/{org_id}/projects/{project_id}/audit/scans/{id}": ["audit:read"],
  "POST /api/v1/orgs/{org_id}/projects/{project_id}/audit/scan-schedules": ["audit:write"],
  "GET /api/v1/orgs/{org_id}/projects/{project_id}/audit/scan-schedules": ["audit:read"],
  "DELETE /api/v1/orgs/{org_id}/projects/{project_id}/audit/scan-schedules/{id}": ["audit:write"],
  "POST /api/v1/logs/ingest": "ingest",
  "POST /api/v1/logs/ingest/batch": "ingest",
  "POST /api/v1/logs/projects": ["logs:write"],
  "GET /api/v1/logs/projects": ["logs:read"],
  "GET /api/v1/logs/projects/{id}": ["logs:read"],
  "DELETE /api/v1/logs/projects/{id}": ["logs:write"],
  "POST /api/v1/logs/projects/{id}/rotate-token": ["logs:write"],
  "GET /api/v1/logs/projects/{id}/streams": ["logs:read"],
  "GET /api/v1/logs/projects/{id}/entries": ["logs:read"],
  "GET /api/v1/logs/projects/{id}/tail": ["logs:read"],
  "GET /api/v1/logs/projects/{id}/alerts": ["logs:read"],
  "POST /api/v1/logs/projects/{id}/alerts": ["logs:write"],
  "PUT /api/v1/logs/alerts/{id}": ["logs:write"],
  "DELETE /api/v1/logs/alerts/{id}": ["logs:write"],
  "GET /api/v1/logs/alerts/{id}/firings": ["logs:read"],
  "POST /api/v1/webhooks/sources": ["webhooks:write"],
  "GET /api/v1/webhooks/sources": ["webhooks:read"],
  "GET /api/v1/webhooks/sources/{source_id}": ["webhooks:read"],
  "PATCH /api/v1/webhooks/sources/{source_id}": ["webhooks:write"],
  "DELETE /api/v1/webhooks/sources/{source_id}": ["webhooks:write"],
  "POST /api/v1/webhooks/sources/{source_id}/destinations": ["webhooks:write"],
  "GET /api/v1/webhooks/sources/{source_id}/destinations": ["webhooks:read"],
  "PATCH /api/v1/webhooks/sources/{source_id}/destinations/{destination_id}": ["webhooks:write"],
  "DELETE /api/v1/webhooks/sources/{source_id}/destinations/{destination_id}": ["webhooks:write"],
  "GET /api/v1/webhooks/sources/{source_id}/events": ["webhooks:read"],
  "GET /api/v1/webhooks/sources/{source_id}/events/{event_id}": ["webhooks:read"],
  "POST /api/v1/webhooks/sources/{source_id}/events/{event_id}/replay": ["webhooks:write"],
  "POST /api/v1/emails": ["mail:send"],
  "GET /api/v1/emails": ["mail:read"],
  "POST /api/v1/emails/batch": ["mail:send"],
  "GET /api/v1/emails/{id}": ["mail:read"],
  "POST /api/v1/webhooks": ["mail:send"],
  "GET /api/v1/webhooks": ["mail:read", "mail:send"],
  "DELETE /api/v1/webhooks/{id}": ["mail:send"],
  "POST /api/v1/webhooks/{id}/test": ["mail:send"],
  "POST /api/v1/domains": ["mail:send"],
  "GET /api/v1/domains": ["mail:read", "mail:send"],
  "GET /api/v1/domains/{id}": ["mail:read", "mail:send"],
  "DELETE /api/v1/domains/{id}": ["mail:send"],
  "POST /api/v1/domains/{id}/verify": ["mail:send"],
  "GET /api/v1/push/apps": ["push:read"],
  "GET /api/v1/flags": ["flags:read"],
  "POST /api/v1/flags": ["flags:write"],
  "GET /api/v1/flags/{key}": ["flags:read"],
  "PATCH /api/v1/flags/{key}": ["flags:write"],
  "DELETE /api/v1/flags/{key}": ["flags:write"],
  "GET /api/v1/flags/{key}/history": ["flags:read"],
  "POST /api/v1/flags/{key}/revert": ["flags:write"],
  "POST /api/v1/flags/{key}/scheduled-changes": ["flags:write"],
  "GET /api/v1/flags/{key}/scheduled-changes": ["flags:write"],
  "GET /api/v1/flags/{key}/scheduled-changes/{id}": ["flags:write"],
  "DELETE /api/v1/flags/{key}/scheduled-changes/{id}": ["flags:write"],
  "GET /api/v1/flags/{key}/insights": ["flags:read"],
  "GET /api/v1/flags/segments": ["flags:read"],
  "POST /api/v1/flags/segments": ["flags:write"],
  "GET /api/v1/flags/segments/{key}": ["flags:read"],
  "PATCH /api/v1/flags/segments/{key}": ["flags:write"],
  "DELETE /api/v1/flags/segments/{key}": ["flags:write"],
  "GET /api/v1/flags/environments": ["flags:read"],
  "POST /api/v1/flags/environments": ["flags:write"],
  "GET /api/v1/flags/environments/{env}/client-keys": ["flags:read"],
  "POST /api/v1/flags/environments/{env}/client-keys": ["flags:write"],
  "DELETE /api/v1/flags/environments/{env}/client-keys/{id}": ["flags:write"],
  "GET /api/v1/flags/ruleset": ["flags:read"],
  "POST /api/v1/flags/evaluate": ["flags:read"],
  "POST /api/v1/flags/bootstrap": ["flags:read"],
  "POST /api/v1/flags/track": ["flags:write"],
  "POST /api/v1/flags/client/bootstrap": "flagsClient",
  "POST /api/v1/flags/client/track": "flagsClient",
  "GET /api/v1/flags/client/stream": "flagsClient",
  "POST /ofrep/v1/evaluate/flags/{key}": ["flags:read"],
  "POST /ofrep/v1/evaluate/flags": ["flags:read"],
  "POST /api/v1/push/apps": ["push:write"],
  "GET /api/v1/push/apps/{app_id}": ["push:read"],
  "PATCH /api/v1/push/apps/{app_id}": ["push:write"],
  "DELETE /api/v1/push/apps/{app_id}": ["push:write"],
  "POST /api/v1/push/apps/{app_id}/subscribers": ["push:write"],
  "GET /api/v1/push/apps/{app_id}/subscribers": ["push:read"],
  "DELETE /api/v1/push/apps/{app_id}/subscribers/{subscriber_id}": ["push:write"],
  "POST /api/v1/push/apps/{app_id}/notifications": ["push:write"],
  "GET /api/v1/push/apps/{app_id}/notifications": ["push:read"],
  "GET /api/v1/push/apps/{app_id}/notifications/{id}": ["push:read"],
  "GET /api/v1/surveys": ["surveys:read"],
  "POST /api/v1/surveys": ["surveys:write"],
  "GET /api/v1/surveys/templates": ["surveys:read"],
  "GET /api/v1/surveys/{id}": ["surveys:read"],
  "PATCH /api/v1/surveys/{id}": ["surveys:write"],
  "DELETE /api/v1/surveys/{id}": ["surveys:write"],
  "POST /api/v1/surveys/{id}/duplicate": ["surveys:write"],
  "POST /api/v1/surveys/{id}/activate": ["surveys:write"],
  "POST /api/v1/surveys/{id}/close": ["surveys:write"],
  "GET /api/v1/surveys/{survey_id}/sections": ["surveys:read"],
  "POST /api/v1/surveys/{survey_id}/sections": ["surveys:write"],
  "PATCH /api/v1/surveys/{survey_id}/sections/{section_id}": ["surveys:write"],
  "DELETE /api/v1/surveys/{survey_id}/sections/{section_id}": ["surveys:write"],
  "GET /api/v1/surveys/{survey_id}/questions": ["surveys:read"],
  "POST /api/v1/surveys/{survey_id}/questions": ["surveys:write"],
  "POST /api/v1/surveys/{survey_id}/questions/reorder": ["surveys:write"],
  "PATCH /api/v1/surveys/{survey_id}/questions/{question_id}": ["surveys:write"],
  "DELETE /api/v1/surveys/{survey_id}/questions/{question_id}": ["surveys:write"],
  "GET /api/v1/surveys/{survey}/responses": ["surveys:read"],
  "GET /api/v1/surveys/{id}/responses/export": ["surveys:read"],
  "GET /api/v1/surveys/{id}/summary": ["surveys:read"],
  "POST /api/v1/surveys/{id}/webhooks": ["surveys:write"],
  "GET /api/v1/surveys/{id}/webhooks": ["surveys:read"],
  "DELETE /api/v1/surveys/{id}/webhooks/{webhook_id}": ["surveys:write"],
  "POST /api/v1/forms": ["forms:write"],
  "GET /api/v1/forms": ["forms:read"],
  "GET /api/v1/forms/{id}": ["forms:read"],
  "PATCH /api/v1/forms/{id}": ["forms:write"],
  "DELETE /api/v1/forms/{id}": ["forms:write"],
  "GET /api/v1/forms/{id}/submissions": ["forms:read"],
  "GET /api/v1/forms/{id}/submissions/export": ["forms:read"],
  "GET /api/v1/forms/{id}/submissions/{sid}": ["forms:read"],
  "DELETE /api/v1/forms/{id}/submissions/{sid}": ["forms:write"],
  "POST /api/v1/forms/{id}/submissions/{sid}/spam": ["forms:write"],
  "POST /api/v1/forms/{id}/submissions/{sid}/not-spam": ["forms:write"],
  "GET /api/v1/forms/{id}/submissions/{sid}/files/{file_id}": ["forms:read"],
  "GET /api/v1/forms/{id}/deliveries": ["forms:read"],
  "GET /api/v1/forms/{id}/submissions/{sid}/deliveries": ["forms:read"],
  "POST /api/v1/forms/{id}/submissions/{sid}/resend": ["forms:write"],
  "POST /api/v1/analytics/sites": ["analytics:write"],
  "GET /api/v1/analytics/sites": ["analytics:read", "analytics:write"],
  "GET /api/v1/analytics/sites/{id}": ["analytics:read", "analytics:write"],
  "PATCH /api/v1/analytics/sites/{id}": ["analytics:write"],
  "DELETE /api/v1/analytics/sites/{id}": ["analytics:write"],
  "GET /api/v1/analytics/sites/{id}/realtime": ["analytics:read", "analytics:write"],
  "POST /api/v1/analytics/query": ["analytics:read", "analytics:write"],
};

/** Routes that are public on purpose (no credential); any other route without security fails. */
const PUBLIC_ROUTES = new Set([
  "GET /insights/audit/reports/shared/{token}",
  "GET /insights/audit/reports/download/{token}",
  "POST /in/{slug}",
  "GET /api/v1/surveys/{slug}/public",
  "POST /api/v1/surveys/{survey}/responses",
  "GET /api/v1/surveys/{slug}/responses/{response_id}",
  "POST /api/v1/surveys/{slug}/responses/{response_id}/answers",
  "POST /api/v1/surveys/{slug}/responses/{response_id}/back",
  "POST /api/v1/surveys/{slug}/responses/{response_id}/complete",
  "POST /f/{form_id}",
  "GET /f/{form_id}/thanks",
  "GET /f/{form_id}/files/{token}",
  "POST /api/event",
  "GET /a/script.js",
]);

/** A valid body per route, so that ownership (not validation) decides the cross-team answer. */
function validBody(key: string): unknown {
  const bodies: Record<string, unknown> = {
    "POST /api/v1/orgs/{org_id}/projects/{project_id}/audit/findings": { title: "XSS", priority_score: 1 },
    "PATCH /api/v1/orgs/{org_id}/projects/{project_id}/audit/findings/{id}": { title: "renamed" },
    "POST /api/v1/orgs/{org_id}/projects/{project_id}/audit/findings/{id}/verifications": { result: "failed" },
    "POST /api/v1/orgs/{org_id}/projects/{project_id}/audit/reports/export": { format: "csv" },
    "POST /api/v1/orgs/{org_id}/projects/{project_id}/audit/reports/share": { channel: "link" },
    "POST /api/v1/orgs/{org_id}/projects/{project_id}/audit/scans": { target_url: "https://other-target.example/" },
    "POST /api/v1/orgs/{org_id}/projects/{project_id}/audit/scan-schedules": { target_url: "https://other-target.example/", every: "day" },
    "POST /api/v1/logs/ingest": { message: "hello" },
    "POST /api/v1/flags": { key: "other-flag" },
    "PATCH /api/v1/flags/{key}": { name: "renamed" },
    "POST /api/v1/flags/{key}/revert": { version: 1 },
    "POST /api/v1/flags/{key}/scheduled-changes": { environment: "production", at: "2040-01-01T00:00:00Z", enabled: true },
    "POST /api/v1/flags/segments": { key: "other-segment" },
    "PATCH /api/v1/flags/segments/{key}": { name: "renamed" },
    "POST /api/v1/flags/environments": { key: "other-env" },
    "POST /api/v1/flags/environments/{env}/client-keys": { name: "other" },
    "POST /api/v1/flags/evaluate": { environment: "production", context: { key: "u" } },
    "POST /api/v1/flags/bootstrap": { environment: "production", context: { key: "u" } },
    "POST /api/v1/flags/track": { environment: "production", events: [{ kind: "custom", name: "n", context_key: "u" }] },
    "POST /api/v1/logs/projects": { name: "other" },
    "POST /api/v1/logs/projects/{id}/alerts": { name: "a", level: "fatal", threshold: 1, window_minutes: 2, notify_email: "owner@example.com" },
    "PUT /api/v1/logs/alerts/{id}": { threshold: 9 },
    "POST /api/v1/webhooks/sources": { name: "s", provider: "generic" },
    "PATCH /api/v1/webhooks/sources/{source_id}": { name: "renamed", signing_secret: "new-secret-value" },
    "POST /api/v1/webhooks/sources/{source_id}/destinations": { url: "http://127.0.0.1:9/other" },
    "PATCH /api/v1/webhooks/sources/{source_id}/destinations/{destination_id}": { enabled: true },
    "POST /api/v1/emails": { from: "Acme <hello@acme.dev>", to: "a@example.com", subject: "S", text: "T", stream: "transactional" },
    "POST /api/v1/emails/batch": { emails: [{ from: "Acme <hello@acme.dev>", to: "a@example.com", subject: "S", text: "T", stream: "transactional" }] },
    "POST /api/v1/webhooks": { url: "https://127.0.0.1:9/m2", events: ["email.sent"] },
    "POST /api/v1/domains": { name: `d-${crypto.randomUUID().slice(0, 8)}.example` },
    "POST /api/v1/push/apps": { name: "other" },
    "PATCH /api/v1/push/apps/{app_id}": { name: "renamed" },
    "POST /api/v1/push/apps/{app_id}/subscribers": {
      endpoint: `https://127.0.0.1:9/push/${crypto.randomUUID()}`,
      keys: { p256dh: "BPcMbnWQL5GOYX_5bFHTpXzrkGH6rTcY3hsDmo5oaomh8TkB5XHmO0dzOl7UpxV6ATA4kWGZuu9pg0eKK7UyHFc", auth: "7qBNjiLDPN41Ag6Z4L6hSg" },
    },
    "POST /api/v1/push/apps/{app_id}/notifications": { title: "t", body: "b" },
    "POST /api/v1/surveys": { name: "n", slug: `x-${crypto.randomUUID().slice(0, 12)}` },
    "PATCH /api/v1/surveys/{id}": { name: "renamed" },
    "POST /api/v1/surveys/{survey_id}/sections": { title: "s", position: 2 },
    "PATCH /api/v1/surveys/{survey_id}/sections/{section_id}": { title: "renamed" },
    "POST /api/v1/surveys/{survey_id}/questions": { type: "text", title: "q", position: 2 },
    "POST /api/v1/surveys/{survey_id}/questions/reorder": { question_ids: [crypto.randomUUID()] },
    "PATCH /api/v1/surveys/{survey_id}/questions/{question_id}": { title: "renamed" },
    "POST /api/v1/surveys/{id}/webhooks": { url: "http://127.0.0.1:9/s2" },
    // keys:read, which keys:write implies: the only scope a key holding keys:write alone may grant.
    "POST /api/v1/keys": { name: "k", scopes: ["keys:read"] },
    "POST /api/v1/forms": { name: "other" },
    "PATCH /api/v1/forms/{id}": { name: "renamed" },
    "POST /api/v1/analytics/sites": { domain: "other.example" },
    "PATCH /api/v1/analytics/sites/{id}": { keep_query_string: true },
  };
  return bodies[key];
}

let operations: Operation[];
let doc: any;
let A: Fixture;
let B: Fixture;
const limitedKeys = new Map<string, string>();
/** Every secret of both teams and of every key created here. */
const allSecrets: string[] = [];
let observed = 0;

/** Create answers that show their resource's secret once, as documented: the field allowed there. */
const SHOWN_ONCE: Record<string, string> = {
  "POST /api/v1/logs/projects": "$.data.ingest_token",
  "POST /api/v1/logs/projects/{id}/rotate-token": "$.data.ingest_token",
  "POST /api/v1/webhooks/sources/{source_id}/destinations": "$.data.secret",
  "POST /api/v1/webhooks": "$.data.secret",
  "POST /api/v1/surveys/{id}/webhooks": "$.data.secret",
  "POST /api/v1/keys": "$.data.key",
  "POST /api/v1/forms": "$.data.webhook_secret",
};

/** Sends a request and scans its answer for secrets; returns status, text and parsed body. */
async function send(op: Operation, path: string, options: RequestOptions & { body?: unknown }) {
  const init: RequestOptions = { ip: anyIp(), ...options };
  if (op.method === "GET" || op.method === "DELETE" || init.body === undefined) delete init.body;
  if (op.path === "/api/v1/logs/ingest/batch") {
    init.raw = '{"message":"a"}\n';
    init.headers = { ...init.headers, "content-type": "application/x-ndjson" };
    delete init.body;
  }
  const res = await call(op.method, path, init);
  const text = await answerText(res);
  observed++;
  const shownOnce = res.status === 201 || res.status === 200 ? SHOWN_ONCE[routeKey(op)] : undefined;
  expectNoSecrets(`${op.method} ${path} (${res.status})`, text, allSecrets, shownOnce ? [shownOnce] : []);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  // A secret shown once joins the list of values no later answer may carry.
  if (shownOnce) {
    const value = shownOnce
      .split(".")
      .slice(1)
      .reduce<any>((node, k) => node?.[k], body);
    if (typeof value === "string") allSecrets.push(value);
  }
  return { status: res.status, text, body };
}

const bearerOps = () => operations.filter((op) => op.security === "bearerAuth");
const ownPath = (op: Operation, f: Fixture) => fillPath(op.path, (name) => f.ids[paramKind(op.path, name)]);

/** A key of team A holding every scope except those that would satisfy `accepted`. */
async function keyWithout(accepted: Scope[]): Promise<string> {
  const scopes = specScopes().filter((s) => !accepted.some((a) => hasScope([s], a)));
  const id = scopes.join(",");
  let key = limitedKeys.get(id);
  if (!key) {
    key = (await addKey(A.team.teamId, scopes)).key;
    limitedKeys.set(id, key);
    allSecrets.push(key);
  }
  return key;
}

beforeAll(async () => {
  ({ doc, operations } = await loadOperations());
  A = await buildFixture();
  B = await buildFixture();
  allSecrets.push(...A.secrets, ...B.secrets);
}, 60_000);

describe("the route table", () => {
  it("has an entry for every route of the OpenAPI document, and no entry for a route that is gone", () => {
    const documented = operations
      .filter((op) => op.security !== null)
      .map(routeKey)
      .sort();
    expect(
      documented.filter((k) => !(k in SCOPE_TABLE)),
      "routes without security tests: add them to SCOPE_TABLE",
    ).toEqual([]);
    expect(
      Object.keys(SCOPE_TABLE).filter((k) => !documented.includes(k)),
      "SCOPE_TABLE entries for routes not in the document",
    ).toEqual([]);
    const open = operations.filter((op) => op.security === null).map(routeKey);
    expect(
      open.filter((k) => !PUBLIC_ROUTES.has(k)),
      "unauthenticated routes not known to be public",
    ).toEqual([]);
    for (const op of operations) {
      const access = SCOPE_TABLE[routeKey(op)];
      if (access === "ingest") expect(op.security).toBe("ingestToken");
      else if (access === "admin") expect(op.security).toBe("adminToken");
      else if (access === "flagsClient") expect(op.security).toBe("flagsClientKey");
      else if (access) {
        expect(op.security).toBe("bearerAuth");
        // The document states the scopes each route declares; this table, written from the
        // specification, must agree with that declaration: a key is accepted when it holds one of
        // the declared scopes or a scope that implies one (webhooks:write implies webhooks:read).
        const acceptedBy = (scopes: readonly string[]) => keyScopes().filter((held) => scopes.some((wanted) => hasScope([held], wanted as Scope)));
        expect(acceptedBy(op.scopes), routeKey(op)).toEqual(acceptedBy(access));
      }
    }
    // Every path parameter of every route maps to a known resource kind of the fixture.
    for (const op of operations) for (const p of op.params.filter((p) => p.in === "path")) expect(typeof paramKind(op.path, p.name)).toBe("string");
  });
});

describe("401 without a valid credential", () => {
  it("every team-key route answers 401 {error:'Invalid or missing API key'} with no key and with an unknown key", async () => {
    await inPool(bearerOps(), 1, async (op) => {
      const path = ownPath(op, A);
      // A valid key in another scheme than Bearer is no credential either (checked on GET routes).
      const keys = [null, `edp_${crypto.randomUUID().replace(/-/g, "")}`, ...(op.method === "GET" ? [`Basic ${A.team.key}`] : [])];
      for (const key of keys) {
        const headers = key?.startsWith("Basic") ? { authorization: key } : undefined;
        const res = await send(op, path, { key: headers ? null : key, headers, body: validBody(routeKey(op)) });
        expect({ route: routeKey(op), status: res.status, body: res.body }).toEqual({
          route: routeKey(op),
          status: 401,
          body: { error: "Invalid or missing API key" },
        });
      }
    });
  });

  it("the ingest routes answer 401 {error:'Invalid or missing ingest token'} with no token, a wrong one or a team API key", async () => {
    const ingestOps = operations.filter((op) => op.security === "ingestToken");
    expect(ingestOps.length).toBe(2);
    for (const op of ingestOps) {
      for (const key of [null, `lgt_${crypto.randomUUID()}`, A.team.key, B.ids.ingestToken.slice(0, -2)]) {
        const res = await send(op, op.path, { key, body: validBody(routeKey(op)) });
        expect({ route: routeKey(op), status: res.status, body: res.body }).toEqual({
          route: routeKey(op),
          status: 401,
          body: { error: "Invalid or missing ingest token" },
        });
      }
      // Control: the right token is accepted.
      expect((await send(op, op.path, { key: A.ids.ingestToken, body: validBody(routeKey(op)) })).status).toBe(202);
    }
  });

  it("the operator routes refuse a missing token and a team API key", async () => {
    for (const op of operations.filter((op) => op.security === "adminToken")) {
      const path = fillPath(op.path, () => A.team.teamId);
      for (const key of [null, A.team.key]) {
        const res = await send(op, path, { key, body: {} });
        expect({ route: routeKey(op), status: res.status, body: res.body }).toEqual({
          route: routeKey(op),
          status: 401,
          body: { error: "Invalid or missing admin token" },
        });
      }
    }
  });
});

describe("403 without the route's scope", () => {
  it("a key holding every scope but the route's answers 403 {error:'Insufficient scope'}; the scope alone gets past the check", async () => {
    for (const op of bearerOps()) {
      const accepted = SCOPE_TABLE[routeKey(op)] as Scope[];
      const res = await send(op, ownPath(op, A), { key: await keyWithout(accepted), body: validBody(routeKey(op)) });
      expect({ route: routeKey(op), status: res.status, body: res.body }).toEqual({ route: routeKey(op), status: 403, body: { error: "Insufficient scope" } });

      // Control: each accepted scope alone passes the scope check. Unknown ids keep it harmless.
      for (const scope of accepted) {
        const key = limitedKeys.get(`only:${scope}`) ?? (await addKey(A.team.teamId, [scope])).key;
        if (!limitedKeys.has(`only:${scope}`)) {
          limitedKeys.set(`only:${scope}`, key);
          allSecrets.push(key);
        }
        const path = fillPath(op.path, (name) => (name === "org_id" ? A.team.teamId : name === "project_id" ? "scope-check" : crypto.randomUUID()));
        const control = await send(op, path, { key, body: validBody(routeKey(op)) });
        expect([401, 403], `${routeKey(op)} with only ${scope}: ${control.text}`).not.toContain(control.status);
        expect(control.status, `${routeKey(op)} with only ${scope}`).toBeLessThan(500);
      }
    }
  });
});

describe("another team's ids answer exactly like unknown ids", () => {
  it("every route with an id answers 404, with the same body as for a random UUID, and changes nothing", { timeout: 120_000 }, async () => {
    let compared = 0;
    await inPool(bearerOps(), 1, async (op) => {
      const owned = op.params.filter((p) => p.in === "path" && paramKind(op.path, p.name) !== "auditProject").map((p) => p.name);
      if (!owned.length) return;
      // Parameters before position j are B's own; j is A's (or random); the rest A's (or random).
      for (let j = 0; j < owned.length; j++) {
        const value = (mode: "A" | "random") => (name: string) => {
          const kind = paramKind(op.path, name);
          if (kind === "auditProject") return A.ids.auditProject;
          const i = owned.indexOf(name);
          if (i < j) return B.ids[kind];
          return mode === "A" ? A.ids[kind] : crypto.randomUUID();
        };
        const requestId = `hardening-${crypto.randomUUID()}`;
        const headers = { "x-request-id": requestId };
        const foreign = await send(op, fillPath(op.path, value("A")), { key: B.team.key, headers, body: validBody(routeKey(op)) });
        const unknown = await send(op, fillPath(op.path, value("random")), { key: B.team.key, headers, body: validBody(routeKey(op)) });
        const label = `${routeKey(op)} with A's ${owned[j]}`;
        expect(foreign.status, `${label}: ${foreign.text}`).toBe(404);
        // OFREP's error body names the flag key asked (its protocol's `key` field): compared without it.
        const unkeyed = (body: unknown) => (op.path.startsWith("/ofrep/") && body && typeof body === "object" ? { ...body, key: undefined } : body);
        expect(unkeyed(foreign.body), label).toEqual(unkeyed(unknown.body));
        compared++;
      }
    });
    expect(compared).toBeGreaterThan(40);

    // Nothing of A's was changed or deleted by B's attempts.
    for (const op of bearerOps().filter((op) => op.method === "GET" && op.params.some((p) => p.in === "path"))) {
      const res = await send(op, ownPath(op, A), { key: A.team.key });
      expect([200, 409], `${routeKey(op)}: ${res.text}`).toContain(res.status);
    }
    const survey = await send(bearerOps().find((op) => routeKey(op) === "GET /api/v1/surveys/{id}")!, `surveys/${A.ids.survey}`, { key: A.team.key });
    expect((survey.body as any).data.name).toBe("Survey");
    const source = await send(bearerOps().find((op) => routeKey(op) === "GET /api/v1/webhooks/sources/{source_id}")!, `webhooks/sources/${A.ids.source}`, {
      key: A.team.key,
    });
    expect((source.body as any).data.name).toBe("src");
  });

  it("B's lists never show A's resources", async () => {
    const lists = bearerOps().filter((op) => op.method === "GET");
    await inPool(lists, 1, async (op) => {
      const res = await send(op, ownPath(op, B), { key: B.team.key });
      expect(res.status, `${routeKey(op)}: ${res.text}`).toBeLessThan(500);
      // B's request log holds the paths B itself asked for, A's ids among them (this suite sent
      // them): it echoes what B sent, and holds only B's own keys' requests.
      if (routeKey(op) === "GET /api/v1/requests") {
        const keyIds = [...new Set((JSON.parse(res.text) as { data: { key_id: string }[] }).data.map((row) => row.key_id))];
        const owners = await env.DB.prepare("SELECT DISTINCT team_id FROM api_keys WHERE id IN (SELECT value FROM json_each(?))")
          .bind(JSON.stringify(keyIds))
          .all<{ team_id: string }>();
        expect(owners.results.map((r) => r.team_id)).toEqual(keyIds.length ? [B.team.teamId] : []);
        return;
      }
      const text = res.text;
      for (const kind of [
        "survey",
        "section",
        "question",
        "finding",
        "report",
        "logProject",
        "alert",
        "source",
        "destination",
        "event",
        "pushApp",
        "subscriber",
        "notification",
        "email",
        "mailWebhook",
        "surveyWebhook",
        "analyticsSite",
      ]) {
        expect(text.includes(A.ids[kind]), `${routeKey(op)} shows A's ${kind}`).toBe(false);
      }
    });
  });
});

/**
 * Routes whose handler reads its body itself (`body: { own: N }`): no JSON limit runs before their
 * credential, and their answer past N is their own (its document says which).
 */
const OWN_BODY_READERS: Record<string, string> = {
  "POST /api/v1/emails": "10 MiB, then 422 on `_body` (mail's shape)",
  "POST /api/v1/emails/batch": "10 MiB, then 422 on `_body` (mail's shape)",
  "POST /api/v1/logs/ingest": "1 MB, read after the ingest token is checked",
  "POST /api/v1/logs/ingest/batch": "5 MB, read after the ingest token is checked",
  "POST /in/{slug}": "1 MB, read beside the public bucket's count",
};

const UNITS: Record<string, number> = { KB: 1024, MB: 1024 * 1024 };
/** The limit a document's 413 entry states (`Payload too large (max 1MB)`): its bytes and message, or null. */
function statedLimit(op: Operation): { bytes: number; message: string } | null {
  const description: string | undefined = doc.paths[op.path][op.method.toLowerCase()].responses?.["413"]?.description;
  const match = description?.match(/^Payload too large \(max (\d+)(KB|MB)\)$/);
  return match ? { bytes: Number(match[1]) * UNITS[match[2]], message: match[0] } : null;
}

describe("413 before any credential, at each route's declared limit", () => {
  it("every operation taking a body states its limit as a 413, unless its handler reads the body itself", () => {
    const withBody = operations.filter((op) => op.bodyTypes.length > 0 && !(routeKey(op) in OWN_BODY_READERS));
    expect(withBody.length).toBeGreaterThan(40);
    expect(withBody.filter((op) => statedLimit(op) === null).map(routeKey), "routes with a body and no declared limit in the document").toEqual([]);
    const documented = operations.map(routeKey);
    expect(Object.keys(OWN_BODY_READERS).filter((k) => !documented.includes(k))).toEqual([]);
  });

  it("one byte over the stated limit answers 413 with no credential, a wrong one, or a key without the route's scope", { timeout: 120_000 }, async () => {
    let sent = 0;
    for (const op of operations.filter((op) => !(routeKey(op) in OWN_BODY_READERS))) {
      const limit = statedLimit(op);
      if (limit === null) continue;
      const path = fillPath(op.path, (name) => (name === "org_id" ? A.team.teamId : crypto.randomUUID()));
      const access = SCOPE_TABLE[routeKey(op)];
      const credentials: Array<string | null> = [null];
      if (access === "admin") credentials.push(A.team.key);
      else if (Array.isArray(access)) credentials.push(await keyWithout(access));
      for (const key of credentials) {
        const raw = JSON.stringify({ name: "x".repeat(limit.bytes + 1 - 11) });
        const res = await call(op.method, path, { key, raw, headers: { "content-type": "application/json" }, ip: anyIp() });
        const text = await answerText(res);
        expect({ route: routeKey(op), key: key ? "wrong" : "none", status: res.status }).toEqual({
          route: routeKey(op),
          key: key ? "wrong" : "none",
          status: 413,
        });
        // The product's shape carries the message the document states, in the body its document
        // names (the route helper's errorBody, rendered by the router's error format).
        expect(text, routeKey(op)).toContain(limit.message);
        const schema = resolve(doc, doc.paths[op.path][op.method.toLowerCase()].responses["413"].content["application/json"].schema);
        const fields = Object.keys(JSON.parse(text));
        expect({ route: routeKey(op), fields: fields.filter((f) => !(f in schema.properties)) }).toEqual({ route: routeKey(op), fields: [] });
        expect({ route: routeKey(op), missing: (schema.required ?? []).filter((f: string) => !fields.includes(f)) }).toEqual({
          route: routeKey(op),
          missing: [],
        });
        sent++;
      }
    }
    expect(sent).toBeGreaterThan(80);
  });
});

describe("no secret in any body", () => {
  it("success bodies of every read route of the owner carry no secret field or value", async () => {
    for (const op of bearerOps().filter((op) => op.method === "GET")) {
      const res = await send(op, ownPath(op, A), { key: A.team.key });
      expect([200, 409], `${routeKey(op)}: ${res.text}`).toContain(res.status);
    }
    // The event detail carries the received headers: the signature is of the payload, not the secret.
    // Updates answer without the secret they were given.
    const patch = bearerOps().find((op) => routeKey(op) === "PATCH /api/v1/webhooks/sources/{source_id}")!;
    const patched = await send(patch, `webhooks/sources/${A.ids.source}`, { key: A.team.key, body: { signing_secret: "rotated-secret-value-123" } });
    expect(patched.status).toBe(200);
    expect(patched.text).not.toContain("rotated-secret-value-123");
    const appPatch = bearerOps().find((op) => routeKey(op) === "PATCH /api/v1/push/apps/{app_id}")!;
    const app = await send(appPatch, `push/apps/${A.ids.pushApp}`, { key: A.team.key, body: { fcm_credentials: { token: "fcm-rotated-value-123" } } });
    expect(app.status).toBe(200);
    expect(app.text).not.toContain("fcm-rotated-value-123");
    // Validation errors do not echo a submitted secret either.
    const bad = await send(appPatch, `push/apps/${A.ids.pushApp}`, {
      key: A.team.key,
      body: { name: "", apns_credentials: 42, vapid_private_key: "leak-me-private-key" },
    });
    expect(bad.status).toBe(422);
    expect(bad.text).not.toContain("leak-me-private-key");
    expect(observed).toBeGreaterThan(30);
  });

  it("the secret scanner itself finds nested secret fields and values", () => {
    expect(() => expectNoSecrets("probe", JSON.stringify({ data: [{ a: { signing_secret: "x" } }] }), [])).toThrow();
    expect(() => expectNoSecrets("probe", JSON.stringify({ data: { note: `key ${A.team.key}` } }), [A.team.key])).toThrow();
    expect(() => expectNoSecrets("probe", JSON.stringify({ data: { id: "x" } }), [A.team.key])).not.toThrow();
    expect(ADMIN_TOKEN).toBeTruthy();
  });
});
