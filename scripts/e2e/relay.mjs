// Webhook relay over real HTTP: a signed generic source, a destination at a local receiver, a
// verified ingest forwarded through the webhook-deliveries queue with Standard Webhooks headers
// the receiver verifies, the recorded attempt, and a replay.
import { createHmac, randomUUID } from "node:crypto";
import { assert, eventually, expectStatus, need, request } from "./http.mjs";
import { startReceiver } from "./receiver.mjs";

export async function relayChecks({ url, createTeamWithKey, defer }) {
  const { key } = await createTeamWithKey({ name: "Relay e2e" });
  const receiver = await startReceiver();
  defer(() => receiver.close());
  const signingSecret = `e2e-${randomUUID()}`;
  const api = (method, path, body) => request(url, method, `/api/v1${path}`, { key, body });
  const state = {};
  const body = JSON.stringify({ type: "order.created", id: `o_${randomUUID()}`, amount: 4200 });
  const sign = (raw) => createHmac("sha256", signingSecret).update(raw).digest("hex");

  return {
    "relay: a generic signed source and a destination at a local receiver": async () => {
      const source = expectStatus(
        await api("POST", "/webhooks/sources", { name: "e2e orders", provider: "generic", signing_secret: signingSecret }),
        201,
        "create source",
      );
      assert.equal(source.body.data.signature_verification, true);
      assert.equal(source.body.data.signing_secret, undefined);
      state.source = source.body.data;
      const destination = await api("POST", `/webhooks/sources/${state.source.id}/destinations`, { url: `${receiver.url}/orders` });
      expectStatus(destination, 201, "create destination");
      assert.match(destination.body.data.secret, /^whsec_/);
      receiver.secret = destination.body.data.secret;
      state.destination = destination.body.data;
    },

    "relay: ingest with a bad signature answers 401, a valid one 202": async () => {
      const source = need(state.source, "source");
      const ingest = (signature) =>
        request(url, "POST", `/in/${source.slug}`, {
          raw: body,
          headers: { "content-type": "application/json", "x-signature": signature, "x-event-id": JSON.parse(body).id },
        });
      const bad = expectStatus(await ingest(sign(`${body} `)), 401, "ingest with a wrong signature");
      assert.deepEqual(bad.body, { error: "Invalid webhook signature" });
      const ok = expectStatus(await ingest(sign(body)), 202, "ingest with a valid signature");
      assert.equal(ok.body.data.event_type, "order.created");
      assert.equal(ok.body.data.duplicate, false);
      assert.equal(ok.body.data.deliveries, 1);
      state.eventId = ok.body.data.id;
    },

    "relay: the receiver gets the body with verifying Standard Webhooks headers": async () => {
      const eventId = need(state.eventId, "event");
      const hit = await receiver.waitFor((r) => r.headers["x-relay-event-id"] === eventId);
      assert.equal(hit.verified, true, hit.problem);
      assert.equal(hit.text, body);
      assert.equal(hit.headers["content-type"], "application/json");
      assert.equal(hit.headers["x-relay-event-type"], "order.created");
      assert.equal(hit.headers["x-signature"], undefined, "the inbound signature header is not forwarded");
      state.firstWebhookId = hit.headers["webhook-id"];
    },

    "relay: the event detail shows a delivered attempt": async () => {
      const eventId = need(state.eventId, "event");
      const detail = await eventually(async () => {
        const res = expectStatus(await api("GET", `/webhooks/sources/${state.source.id}/events/${eventId}`), 200, "event detail");
        const delivery = res.body.data.deliveries[0];
        return delivery?.status === "delivered" ? res.body.data : Promise.reject(new Error(`delivery: ${JSON.stringify(delivery)}`));
      });
      assert.equal(detail.body, body);
      const [delivery] = detail.deliveries;
      assert.equal(delivery.destination_id, state.destination.id);
      assert.equal(delivery.id, state.firstWebhookId);
      assert.equal(delivery.attempts.length, 1);
      assert.equal(delivery.attempts[0].status_code, 200);
    },

    "relay: a replay is delivered again under a new webhook-id": async () => {
      const eventId = need(state.eventId, "event");
      const replay = expectStatus(await api("POST", `/webhooks/sources/${state.source.id}/events/${eventId}/replay`), 202, "replay");
      assert.deepEqual(replay.body.data, { count: 1, destination_ids: [state.destination.id] });
      const again = await receiver.waitFor((r) => r.headers["x-relay-event-id"] === eventId && r.headers["webhook-id"] !== state.firstWebhookId);
      assert.equal(again.verified, true, again.problem);
      assert.equal(again.text, body);
      assert.equal(receiver.requests.filter((r) => r.verified === false).length, 0, "no request may fail verification");
    },
  };
}
