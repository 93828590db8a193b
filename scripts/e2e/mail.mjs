// Mail over real HTTP: a send delivered by the mail-sends queue consumer (outbox transport) with
// its signed email.delivered webhook verified by a local receiver, a policy error, a batch item
// missing a field, and a webhook test to an unreachable local port.
import { assert, eventually, expectStatus, need, request } from "./http.mjs";
import { startReceiver } from "./receiver.mjs";
import { freePort } from "../lib/dev-server.mjs";

export async function mailChecks({ url, createTeamWithKey, defer, dns }) {
  const { key } = await createTeamWithKey({ name: "Mail e2e", domains: [] });
  const receiver = await startReceiver();
  defer(() => receiver.close());
  const api = (method, path, body) => request(url, method, `/api/v1${path}`, { key, body });
  const message = { from: "Acme <hello@acme.dev>", to: "user@example.com", subject: "Welcome", text: "Hi there", stream: "transactional" };
  const state = {};

  return {
    "mail: a live key cannot send from a domain its team has not verified (403 domain_not_verified)": async () => {
      const res = expectStatus(await api("POST", "/emails", message), 403, "unverified sender");
      assert.equal(res.body.code, "domain_not_verified");
      const platform = expectStatus(await api("POST", "/emails", { ...message, from: "Edge Platform <no-reply@edge-platform.dev>" }), 403, "platform sender");
      assert.equal(platform.body.code, "domain_not_verified");
      expectStatus(await api("POST", "/domains", { name: "edge-platform.dev" }), 422, "platform domain cannot be added");
    },

    "mail: a sending domain verified over DNS-over-HTTPS at a local resolver": async () => {
      const added = expectStatus(await api("POST", "/domains", { name: "acme.dev" }), 201, "add domain");
      const domain = added.body.data;
      assert.equal(domain.status, "pending");
      const [record] = domain.records;
      assert.equal(record.name, "_edge-platform.acme.dev");
      const missing = expectStatus(await api("POST", `/domains/${domain.id}/verify`), 422, "verify before the record exists");
      assert.match(missing.body.details.records[0], /no TXT record found/);
      dns.records.set(record.name, ["v=spf1 -all", record.value]);
      const verified = expectStatus(await api("POST", `/domains/${domain.id}/verify`), 200, "verify");
      assert.equal(verified.body.data.status, "verified");
      assert.ok(
        dns.asked.some((q) => q.name === record.name && q.type === "TXT" && q.accept === "application/dns-json"),
        "the resolver was asked over HTTP",
      );
    },

    "mail: a webhook for email.delivered at a local receiver": async () => {
      const hook = expectStatus(await api("POST", "/webhooks", { url: `${receiver.url}/mail`, events: ["email.delivered"] }), 201, "create mail webhook");
      assert.match(hook.body.data.secret, /^whsec_/);
      receiver.secret = hook.body.data.secret;
      state.webhookId = hook.body.data.id;
    },

    "mail: POST /emails is queued, then delivered by the queue consumer": async () => {
      const sent = expectStatus(await api("POST", "/emails", message), 201, "send");
      assert.equal(sent.body.data.status, "queued");
      const id = sent.body.data.id;
      const email = await eventually(
        async () => {
          const res = expectStatus(await api("GET", `/emails/${id}`), 200, "get email");
          return res.body.data.status === "delivered"
            ? res.body.data
            : Promise.reject(new Error(`status ${res.body.data.status}, history ${JSON.stringify(res.body.data.history)}`));
        },
        { timeoutMs: 20_000 },
      );
      assert.deepEqual(
        email.history.map((h) => h.status),
        ["queued", "sent", "delivered"],
      );
      assert.deepEqual(email.to, ["user@example.com"]);
      // The body is read back from the MAIL_BODIES bucket of wrangler dev's local R2.
      assert.equal(email.text, "Hi there");
      assert.equal(email.html, null);
      state.emailId = id;
    },

    "mail: the email.delivered webhook verifies with the webhook secret": async () => {
      const emailId = need(state.emailId, "delivered email");
      need(state.webhookId, "mail webhook");
      const hit = await receiver.waitFor((r) => r.verified && JSON.parse(r.text).data?.email_id === emailId);
      const body = JSON.parse(hit.text);
      assert.equal(body.type, "email.delivered");
      assert.equal(body.data.status, "delivered");
      assert.equal(body.data.subject, "Welcome");
      assert.equal(receiver.requests.filter((r) => r.verified === false).length, 0, "no request may fail verification");
    },

    "mail: an unknown stream is the invalid_stream policy error": async () => {
      const res = expectStatus(await api("POST", "/emails", { ...message, stream: "promotions" }), 422, "send on an unknown stream");
      assert.deepEqual(res.body, { error: "stream must be either 'transactional' or 'broadcast'", code: "invalid_stream" });
    },

    "mail: a batch item missing subject answers 422 naming index 0": async () => {
      const { subject, ...noSubject } = message;
      assert.ok(subject);
      const total = async () => expectStatus(await api("GET", "/emails"), 200, "list emails").body.pagination.total;
      const before = await total();
      const res = expectStatus(await api("POST", "/emails/batch", { emails: [noSubject, message] }), 422, "batch");
      assert.deepEqual(res.body, { error: "Item at index 0: Missing required field: subject" });
      assert.equal(await total(), before, "nothing of the refused batch is stored");
    },

    "mail: a webhook test to an unreachable local port answers 502": async () => {
      const port = await freePort();
      const hook = expectStatus(await api("POST", "/webhooks", { url: `http://127.0.0.1:${port}/nobody`, events: ["email.failed"] }), 201, "create webhook");
      const res = expectStatus(await api("POST", `/webhooks/${hook.body.data.id}/test`), 502, "webhook test");
      assert.deepEqual(Object.keys(res.body), ["error"]);
      assert.equal(res.body.error.message, "Test delivery could not reach the endpoint");
      assert.equal(res.body.error.detail, "The endpoint could not be reached (connection failed or timed out)", "no raw network error (port-scan oracle)");
      expectStatus(await api("DELETE", `/webhooks/${hook.body.data.id}`), 204, "delete webhook");
    },
  };
}
