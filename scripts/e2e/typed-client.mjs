// @ts-check
// Part of the end-to-end run driven through the client package (clients/typescript,
// `@edge-platform/client`) against the live server: its createClient (key, Idempotency-Key,
// retries), orThrow and EdgePlatformError, over the types generated from the committed document.
// Before it runs, scripts/e2e.mjs checks that the server serves exactly the committed document and
// type-checks this file against its types (scripts/lib/typed-client.mjs): a change of the document
// that breaks a path, a parameter, a body or a field used here fails the e2e run, and so CI.
import { createClient, EdgePlatformError, orThrow } from "../../clients/typescript/index.js";
import { assert } from "./http.mjs";

/** @typedef {import("../../clients/typescript/index").Schemas} schemas */

/**
 * @template T
 * @param {{ data?: T, error?: unknown, response: Response }} result
 * @param {number} status
 * @param {string} what
 * @returns {T}
 */
function expectData(result, status, what) {
  assert.equal(result.response.status, status, `${what}: ${result.response.status} ${JSON.stringify(result.error ?? result.data)}`);
  if (result.data === undefined) throw new Error(`${what}: no body`);
  return result.data;
}

/** The Idempotency-Key of a request the client hands to its fetch (always a Request). */
function keyOf(/** @type {RequestInfo | URL} */ input) {
  return input instanceof Request ? (input.headers.get("idempotency-key") ?? "") : "";
}

/**
 * @param {{ url: string, createTeamWithKey: (opts?: { name?: string }) => Promise<{ key: string }> }} ctx
 * @returns {Promise<Record<string, () => Promise<void>>>}
 */
export async function typedClientChecks({ url, createTeamWithKey }) {
  const { key } = await createTeamWithKey({ name: "Typed client e2e" });
  const api = createClient(url, key);
  const publicApi = createClient(url, null);
  const marker = `typed-${Date.now()}`;

  return {
    "typed client: usage of the team's plan": async () => {
      const usage = expectData(await api.GET("/api/v1/usage"), 200, "getUsage");
      assert.equal(usage.data.plan, "pro");
      assert.ok(Date.parse(usage.data.period_start) < Date.parse(usage.data.period_end));
      /** @type {schemas["ServiceUsage"] | undefined} */
      const logs = usage.data.services.logs;
      assert.ok(logs, "usage lists the logs service");
    },

    "typed client: a log project, an entry through its ingest token, and the entry query": async () => {
      const created = expectData(await api.POST("/api/v1/logs/projects", { body: { name: marker, retention_days: 3 } }), 201, "createLogProject");
      const project = created.data;
      assert.match(project.ingest_token, /^lgt_/);
      const ingested = await publicApi.POST("/api/v1/logs/ingest", {
        headers: { authorization: `Bearer ${project.ingest_token}` },
        body: { message: `${marker} hello`, level: "warn", service: "typed", metadata: { n: 1 } },
      });
      assert.deepEqual(expectData(ingested, 202, "ingestLogEntry"), { ok: true });
      // Ingest is asynchronous: poll the typed query until the entry is stored.
      const deadline = Date.now() + 15_000;
      for (;;) {
        const page = expectData(
          await api.GET("/api/v1/logs/projects/{id}/entries", { params: { path: { id: project.id }, query: { q: marker, level: "warn", limit: 10 } } }),
          200,
          "queryLogEntries",
        );
        const entry = page.data.find((e) => e.message === `${marker} hello`);
        if (entry) {
          assert.equal(entry.service, "typed");
          assert.equal(page.pagination.limit, 10);
          break;
        }
        if (Date.now() > deadline) throw new Error(`the ingested entry was not found: ${JSON.stringify(page)}`);
        await new Promise((r) => setTimeout(r, 300));
      }
    },

    "typed client: a survey from draft to a completed response, both operations of /surveys/{survey}/responses": async () => {
      const slug = `${marker}-survey`;
      const survey = expectData(await api.POST("/api/v1/surveys", { body: { name: "Typed", slug } }), 201, "createSurvey").data;
      assert.equal(survey.status, "draft");
      const question = expectData(
        await api.POST("/api/v1/surveys/{survey_id}/questions", {
          params: { path: { survey_id: survey.id } },
          body: { type: "yes_no", title: "Typed?", position: 1 },
        }),
        201,
        "createSurveyQuestion",
      ).data;
      const active = expectData(await api.POST("/api/v1/surveys/{id}/activate", { params: { path: { id: survey.id } } }), 200, "activateSurvey").data;
      assert.equal(active.status, "active");

      // The public start names the survey by slug, the authenticated list by id: one path item.
      const started = expectData(
        await publicApi.POST("/api/v1/surveys/{survey}/responses", { params: { path: { survey: slug } }, body: {} }),
        201,
        "startSurveyResponse",
      ).data;
      assert.equal(started.status, "in_progress");
      const path = { slug, response_id: started.id };
      const answered = expectData(
        await publicApi.POST("/api/v1/surveys/{slug}/responses/{response_id}/answers", { params: { path }, body: { question_id: question.id, value: true } }),
        200,
        "answerSurveyQuestion",
      ).data;
      assert.equal(answered.finished, true);
      const completed = expectData(
        await publicApi.POST("/api/v1/surveys/{slug}/responses/{response_id}/complete", { params: { path } }),
        200,
        "completeSurveyResponse",
      ).data;
      assert.equal(completed.status, "completed");

      const list = expectData(
        await api.GET("/api/v1/surveys/{survey}/responses", { params: { path: { survey: survey.id }, query: { status: "completed" } } }),
        200,
        "listSurveyResponses",
      );
      assert.deepEqual(
        list.data.map((r) => r.id),
        [started.id],
      );
      assert.equal(list.data[0].answers[question.id]?.value, true);
      assert.equal(list.pagination.total, 1);
    },

    "typed client: a POST carries an Idempotency-Key, so the same key replays instead of creating twice": async () => {
      const idempotencyKey = `${marker}-retry`;
      const body = { name: `${marker} idempotent` };
      const first = await api.POST("/api/v1/logs/projects", { body, headers: { "idempotency-key": idempotencyKey } });
      const again = await api.POST("/api/v1/logs/projects", { body, headers: { "idempotency-key": idempotencyKey } });
      assert.equal(first.response.status, 201);
      assert.equal(again.response.headers.get("idempotent-replayed"), "true");
      assert.equal(again.data?.data.id, first.data?.data.id);
      // Without a key of the caller's own, the client sends one of its own on every POST.
      /** @type {string[]} */
      const sent = [];
      const recording = createClient(url, key, { fetch: async (input) => (sent.push(keyOf(input)), fetch(input)) });
      await orThrow(recording.POST("/api/v1/logs/projects", { body: { name: `${marker} keyed` } }));
      assert.match(sent[0], /^[0-9a-f-]{36}$/);
    },

    "typed client: a 5xx is retried with the same Idempotency-Key; a 4xx is not retried": async () => {
      /** @type {string[]} */
      const keys = [];
      let calls = 0;
      // The first answer is a 503 made here; the retry reaches the live server.
      const flaky = createClient(url, key, {
        baseDelayMs: 10,
        fetch: async (input) => {
          calls += 1;
          keys.push(keyOf(input));
          if (calls === 1) return new Response(JSON.stringify({ error: "Log storage temporarily unavailable" }), { status: 503 });
          return fetch(input);
        },
      });
      const created = await orThrow(flaky.POST("/api/v1/logs/projects", { body: { name: `${marker} retried` } }));
      assert.equal(calls, 2);
      assert.equal(keys[0], keys[1]);
      assert.equal(created.data.name, `${marker} retried`);

      let refused = 0;
      const strict = createClient(url, key, { baseDelayMs: 10, fetch: async (input) => ((refused += 1), fetch(input)) });
      const invalid = await strict.POST("/api/v1/logs/projects", { body: { name: "" } });
      assert.equal(invalid.response.status, 422);
      assert.equal(refused, 1);
      assert.deepEqual(invalid.error, { error: "Validation failed", details: { name: ["can't be blank"] } });
    },

    "typed client: orThrow raises EdgePlatformError with the status and the product's error body": async () => {
      try {
        await orThrow(api.GET("/api/v1/surveys/{id}", { params: { path: { id: crypto.randomUUID() } } }));
        assert.fail("expected a 404");
      } catch (error) {
        if (!(error instanceof EdgePlatformError)) throw error;
        assert.equal(error.status, 404);
        assert.deepEqual(error.body, { error: "Survey not found" });
        assert.match(error.requestId ?? "", /^[0-9a-f-]{36}$/);
      }
    },

    "typed client: error bodies are typed too": async () => {
      const missing = await api.GET("/api/v1/surveys/{id}", { params: { path: { id: crypto.randomUUID() } } });
      assert.equal(missing.response.status, 404);
      assert.equal(missing.data, undefined);
      assert.equal(typeof missing.error?.error, "string");
      const noKey = await publicApi.GET("/api/v1/usage");
      assert.equal(noKey.response.status, 401);
      assert.deepEqual(noKey.error, { error: "Invalid or missing API key" });
    },
  };
}
