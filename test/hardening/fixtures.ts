// Shared set-up of the hardening tests: the app's own OpenAPI document as a route list, a team
// holding one real resource of every kind, and a scanner for secrets in response bodies.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { nowSeconds } from "../../src/platform/clock";
import { decryptSecret } from "../../src/platform/crypto";
import { standardWebhookHeaders } from "../../src/platform/webhook-signature";
import { addKey, anyIp, call, json, setupTeam, type TestTeam } from "../helpers/api";
import { keyScopes } from "../../src/platform/scopes";
import { browserSubscription, subscriptionJson } from "../products/push/push-helpers";
import { signedFileUrl } from "../../src/products/forms/forms.files";

// The shared helpers already call the app's fetch with the pool's real bindings.
export { addKey, call, setupTeam } from "../helpers/api";

export interface Operation {
  method: string;
  /** OpenAPI path, e.g. `/api/v1/surveys/{id}`. */
  path: string;
  /** `bearerAuth`, `ingestToken`, `adminToken`, or null for public routes. */
  security: string | null;
  /** The scopes the document's security names (any one suffices), for bearer routes. */
  scopes: string[];
  params: Array<{ in: string; name: string; schema?: Record<string, unknown> }>;
  /** Content types of the request body, when the operation takes one. */
  bodyTypes: string[];
  bodySchema: Record<string, unknown> | null;
}

export const routeKey = (op: { method: string; path: string }) => `${op.method.toUpperCase()} ${op.path}`;

/** Every operation of GET /api/v1/openapi.json, with `$ref`s of body schemas resolved. */
export async function loadOperations(): Promise<{ doc: any; operations: Operation[] }> {
  const res = await call("GET", "openapi.json", { ip: anyIp() });
  expect(res.status).toBe(200);
  const doc = await json(res);
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const security = op.security?.[0] ? Object.keys(op.security[0])[0] : null;
      const content = op.requestBody?.content ?? {};
      const bodyTypes = Object.keys(content);
      const raw = bodyTypes.length ? (content[bodyTypes[0]].schema ?? null) : null;
      operations.push({
        method: method.toUpperCase(),
        path,
        security,
        scopes: (op.security ?? []).flatMap((requirement: Record<string, string[]>) => requirement.bearerAuth ?? []),
        params: (op.parameters ?? []).map((p: any) => (p.$ref ? resolve(doc, p) : p)),
        bodyTypes,
        bodySchema: raw ? resolve(doc, raw) : null,
      });
    }
  }
  return { doc, operations };
}

export function resolve(doc: any, schema: any): any {
  if (schema && typeof schema === "object" && typeof schema.$ref === "string") {
    const parts = schema.$ref.replace(/^#\//, "").split("/");
    let node = doc;
    for (const part of parts) node = node?.[part];
    return resolve(doc, node);
  }
  return schema;
}

/**
 * The kind of resource a path parameter names: by its name, else by the path segment before it.
 * `publicRoute`: the operation takes no credential (public survey routes name the survey by slug,
 * also under the `{survey}` name they share with the authenticated responses route).
 */
export function paramKind(path: string, name: string, publicRoute = false): string {
  if (name === "webhook_id") return "surveyWebhook";
  if (name === "token" && path.startsWith("/f/")) return "formFileToken";
  if (path.includes("/flags/")) {
    if (name === "env") return "flagEnvironment";
    if (name === "id") return path.includes("/client-keys/") ? "flagClientKey" : "flagSchedule";
    if (name === "key") return path.includes("/segments/") ? "flagSegment" : "flag";
  }
  if (name === "project_id" && path.includes("/audit")) return "auditProject";
  const segments = path.split("/");
  const index = segments.indexOf(`{${name}}`);
  const before = segments[index - 1];
  const bySegment: Record<string, string> = {
    orgs: "org",
    findings: "finding",
    reports: "report",
    scans: "scan",
    "scan-schedules": "scanSchedule",
    projects: "logProject",
    alerts: "alert",
    sources: "source",
    destinations: "destination",
    events: "event",
    emails: "email",
    webhooks: "mailWebhook",
    domains: "domain",
    apps: "pushApp",
    subscribers: "subscriber",
    notifications: "notification",
    surveys: "survey",
    sections: "section",
    questions: "question",
    responses: "response",
    teams: "team",
    keys: "key",
    shared: "token",
    download: "token",
    in: "slug",
    forms: "form",
    f: "form",
    submissions: "formSubmission",
    files: "formFile",
    sites: "analyticsSite",
  };
  const kind = bySegment[before];
  if (!kind) throw new Error(`no resource kind for {${name}} in ${path}`);
  // The public survey routes name the survey by slug.
  if (kind === "survey" && (name === "slug" || publicRoute)) return "surveySlug";
  return kind;
}

/** Builds a concrete URL path from an OpenAPI path and a value per parameter. */
export function fillPath(path: string, value: (name: string) => string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(value(name)));
}

export interface Fixture {
  team: TestTeam;
  ids: Record<string, string>;
  /** Plaintext secrets of this team's resources, which no response after their creation may carry. */
  secrets: string[];
}

/** A team on `plan` with one real resource of every kind, created through the API. */
export async function buildFixture(plan = "enterprise"): Promise<Fixture> {
  // The extension scopes too, so the keys routes are reached (and crossed) like every other route.
  const team = await setupTeam({ plan, scopes: [...keyScopes()] });
  const key = team.key;
  const secrets: string[] = [key];
  const ids: Record<string, string> = { org: team.teamId, auditProject: "hardening-project" };
  // A second key of the team: the resource of /api/v1/keys/{id} (never the key the suite uses).
  const second = await addKey(team.teamId, ["logs:read"]);
  ids.key = second.id;
  secrets.push(second.key);
  const ok = async (res: Response, status: number[] = [200, 201, 202]) => {
    const text = await res.text();
    if (!status.includes(res.status)) throw new Error(`fixture call answered ${res.status}: ${text}`);
    return JSON.parse(text).data;
  };

  // Audit: a finding with a verification, and an exported report.
  const audit = `orgs/${team.teamId}/projects/${ids.auditProject}/audit`;
  ids.finding = (await ok(await call("POST", `${audit}/findings`, { key, body: { title: "SQL injection", priority_score: 5 } }))).id;
  await ok(await call("POST", `${audit}/findings/${ids.finding}/verifications`, { key, body: { result: "passed" } }));
  ids.report = (await ok(await call("POST", `${audit}/reports/export`, { key, body: { format: "json" } }))).id;
  ids.scan = (await ok(await call("POST", `${audit}/scans`, { key, body: { target_url: "https://scan-target.example/" } }))).id;
  ids.scanSchedule = (await ok(await call("POST", `${audit}/scan-schedules`, { key, body: { target_url: "https://scan-target.example/", every: "week" } }))).id;

  // Logs: a project (its ingest token is a secret) and an alert.
  const project = await ok(await call("POST", "logs/projects", { key, body: { name: "api" } }));
  ids.logProject = project.id;
  secrets.push(project.ingest_token);
  ids.ingestToken = project.ingest_token;
  ids.alert = (
    await ok(
      await call("POST", `logs/projects/${project.id}/alerts`, {
        key,
        body: { name: "errors", level: "error", threshold: 5, window_minutes: 5, notify_email: "owner@example.com" },
      }),
    )
  ).id;

  // Relay: a signed source, a (disabled) destination and one received event.
  const signingSecret = `sig_${crypto.randomUUID()}`;
  secrets.push(signingSecret);
  const source = await ok(
    await call("POST", "webhooks/sources", { key, body: { name: "src", provider: "standard", signing_secret: `whsec_${btoa(signingSecret)}` } }),
  );
  secrets.push(`whsec_${btoa(signingSecret)}`);
  ids.source = source.id;
  ids.slug = source.slug;
  const destination = await ok(await call("POST", `webhooks/sources/${source.id}/destinations`, { key, body: { url: "http://127.0.0.1:9/hook" } }));
  ids.destination = destination.id;
  secrets.push(destination.secret);
  await ok(await call("PATCH", `webhooks/sources/${source.id}/destinations/${destination.id}`, { key, body: { enabled: false } }));
  const payload = JSON.stringify({ type: "invoice.paid", id: crypto.randomUUID() });
  const headers = await standardWebhookHeaders(`whsec_${btoa(signingSecret)}`, `msg_${crypto.randomUUID()}`, nowSeconds(), payload);
  ids.event = (
    await ok(await call("POST", `/in/${source.slug}`, { raw: payload, headers: { "content-type": "application/json", ...headers }, ip: anyIp() }))
  ).id;

  // Push: an app with FCM credentials, a subscriber and a notification.
  const fcm = `fcm-${crypto.randomUUID()}`;
  const apns = `apns-${crypto.randomUUID()}`;
  secrets.push(fcm, apns);
  // Feature flags: keys chosen per fixture (flag, segment and environment keys are the team's own
  // names, so another team may hold the same ones); an environment of its own, as production and
  // development exist in every team.
  const tag = crypto.randomUUID().slice(0, 8);
  ids.flagEnvironment = (await ok(await call("POST", "flags/environments", { key, body: { key: `env-${tag}` } }))).key;
  ids.flagSegment = (await ok(await call("POST", "flags/segments", { key, body: { key: `segment-${tag}`, included: ["u1"] } }))).key;
  ids.flag = (await ok(await call("POST", "flags", { key, body: { key: `flag-${tag}`, client_side: true } }))).key;
  ids.flagSchedule = (
    await ok(
      await call("POST", `flags/${ids.flag}/scheduled-changes`, { key, body: { environment: ids.flagEnvironment, at: "2040-01-01T00:00:00Z", enabled: true } }),
    )
  ).id;
  const flagsClient = await ok(await call("POST", `flags/environments/${ids.flagEnvironment}/client-keys`, { key, body: { name: "hardening" } }));
  ids.flagClientKey = flagsClient.id;
  secrets.push(flagsClient.key);
  ids.pushApp = (await ok(await call("POST", "push/apps", { key, body: { name: "app", fcm_credentials: { token: fcm }, apns_credentials: apns } }))).id;
  const sealed = await env.DB.prepare("SELECT vapid_private_key_enc AS sealed FROM push_apps WHERE id = ?").bind(ids.pushApp).first<{ sealed: string }>();
  secrets.push(await decryptSecret(env.ENCRYPTION_KEY, sealed!.sealed));
  const sub = await browserSubscription(`https://127.0.0.1:9/push/${crypto.randomUUID()}`);
  ids.subscriber = (await ok(await call("POST", `push/apps/${ids.pushApp}/subscribers`, { key, body: subscriptionJson(sub) }))).id;
  ids.notification = (await ok(await call("POST", `push/apps/${ids.pushApp}/notifications`, { key, body: { title: "Hi", body: "there" } }))).id;

  // Mail: an email and a webhook (its secret is shown once).
  ids.email = (
    await ok(
      await call("POST", "emails", {
        key,
        body: { from: "Acme <hello@acme.dev>", to: "user@example.com", subject: "Hello", text: "Hi", stream: "transactional" },
      }),
    )
  ).id;
  const mailHook = await ok(await call("POST", "webhooks", { key, body: { url: "https://127.0.0.1:9/mail", events: ["email.sent"] } }));
  ids.mailWebhook = mailHook.id;
  secrets.push(mailHook.secret);
  ids.domain = (await ok(await call("POST", "domains", { key, body: { name: "fixture.example" } }))).id;

  // Surveys: a survey with a section and a question, a webhook, activated, and one response.
  const survey = await ok(await call("POST", "surveys", { key, body: { name: "Survey", slug: `hard-${crypto.randomUUID().slice(0, 12)}` } }));
  ids.survey = survey.id;
  ids.surveySlug = survey.slug;
  ids.section = (await ok(await call("POST", `surveys/${survey.id}/sections`, { key, body: { title: "Part 1", position: 1 } }))).id;
  ids.question = (
    await ok(await call("POST", `surveys/${survey.id}/questions`, { key, body: { type: "text", title: "Why?", position: 1, section_id: ids.section } }))
  ).id;
  const surveyHook = await ok(await call("POST", `surveys/${survey.id}/webhooks`, { key, body: { url: "http://127.0.0.1:9/survey" } }));
  ids.surveyWebhook = surveyHook.id;
  secrets.push(surveyHook.secret);
  await ok(await call("POST", `surveys/${survey.id}/activate`, { key }));
  ids.response = (await ok(await call("POST", `surveys/${survey.slug}/responses`, { ip: anyIp() }))).id;

  // Forms: a form taking files with a webhook (its secret shown once), one submission with a file
  // and the 5-minute link to it.
  const form = await ok(await call("POST", "forms", { key, body: { name: "form", files: { enabled: true }, webhook_url: "http://127.0.0.1:9/form-hook" } }));
  ids.form = form.id;
  secrets.push(form.webhook_secret);
  const boundary = "fixtureboundary";
  const multipart = `--${boundary}\r\nContent-Disposition: form-data; name="email"\r\n\r\na@example.com\r\n--${boundary}\r\nContent-Disposition: form-data; name="cv"; filename="cv.txt"\r\n\r\nhello\r\n--${boundary}--\r\n`;
  const posted = await call("POST", `/f/${form.id}`, {
    raw: multipart,
    headers: { "content-type": `multipart/form-data; boundary=${boundary}`, accept: "application/json" },
    ip: anyIp(),
  });
  if (posted.status !== 200) throw new Error(`fixture form post answered ${posted.status}: ${await posted.text()}`);
  ids.formSubmission = (await json(posted)).id;
  const submission = await ok(await call("GET", `forms/${form.id}/submissions/${ids.formSubmission}`, { key }));
  ids.formFile = submission.files[0].id;
  ids.formFileToken = (await signedFileUrl(env, form.id, ids.formSubmission, ids.formFile)).split("/").pop()!;
  // Analytics: a site.
  ids.analyticsSite = (await ok(await call("POST", "analytics/sites", { key, body: { domain: "fixture.example" } }))).id;

  return { team, ids, secrets: secrets.filter((s) => typeof s === "string" && s.length >= 8) };
}

/** Key names that no response body may carry (outside the create answer of their own resource). */
export const SECRET_FIELDS = ["vapid_private_key", "signing_secret", "fcm_credentials", "apns_credentials", "ingest_token", "secret", "key_hash", "token_hash"];

/** Names of secret fields found anywhere in a JSON value, with their paths. */
export function secretFieldsIn(value: unknown, path = "$"): string[] {
  const found: string[] = [];
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) found.push(...secretFieldsIn(v, `${path}[${i}]`));
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      // Keys of `details` / `errors` name the fields that failed validation: their names are no secret.
      const fieldMap = (k === "details" || k === "errors") && v && typeof v === "object" && !Array.isArray(v);
      if (SECRET_FIELDS.includes(k)) found.push(`${path}.${k}`);
      if (fieldMap) for (const [field, messages] of Object.entries(v)) found.push(...secretFieldsIn(messages, `${path}.${k}.${field}`));
      else found.push(...secretFieldsIn(v, `${path}.${k}`));
    }
  }
  return found;
}

/** Asserts that a body carries no secret field and none of the secret values. */
export function expectNoSecrets(label: string, text: string, secrets: string[], allowed: string[] = []): void {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // HTML pages and artefacts: only the values are checked.
  }
  expect(
    secretFieldsIn(parsed).filter((p) => !allowed.includes(p)),
    `${label}: secret field in body`,
  ).toEqual([]);
  const leaked = secrets.filter((s) => text.includes(s));
  expect(
    leaked.map((s) => s.slice(0, 6) + "…"),
    `${label}: secret value in body`,
  ).toEqual([]);
}

/** Run `task` over `items` with at most `limit` in flight. */
export async function inPool<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await task(items[next++]);
  });
  await Promise.all(workers);
}

/**
 * The text of an answer. A live stream (the logs tail, `text/event-stream`) does not end: its first
 * bytes are read, then it is closed, which also frees its slot in the store.
 */
export async function answerText(res: Response): Promise<string> {
  if (res.status === 200 && res.headers.get("content-type")?.startsWith("text/event-stream")) {
    const reader = res.body!.getReader();
    const first = await reader.read();
    await reader.cancel();
    return new TextDecoder().decode(first.value);
  }
  return res.text();
}
