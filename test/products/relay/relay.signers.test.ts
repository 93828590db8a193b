// Inbound signatures made by the providers' own libraries, not by our signing code: Svix's signer
// (`svix-*` and `webhook-*` headers, issue 17), Stripe's test header and GitHub's signature from
// @octokit/webhooks-methods. Happy paths and the refusals: wrong secret, stale timestamp, missing id.
// Then the forwarded delivery, checked with both client verifiers (svix, standardwebhooks): no
// inbound signature of any family may travel with it.
import { sign as githubSign } from "@octokit/webhooks-methods";
import { Webhook as StandardWebhook } from "standardwebhooks";
import Stripe from "stripe";
import { Webhook as SvixWebhook } from "svix";
import { describe, expect, it } from "vitest";
import { toBase64 } from "../../../src/platform/crypto";
import { expectError, json, setupTeam } from "../../helpers/api";
import { createDestination, createSource, eventCount, getEvent, ingest, receiver, waitFor } from "./relay.helpers";

const INVALID = { error: "Invalid webhook signature" };

function whsec(): string {
  return "whsec_" + toBase64(crypto.getRandomValues(new Uint8Array(24)));
}

/** Svix's own signer; `family` names the headers the way Svix (`svix`) or Standard Webhooks (`webhook`) does. */
function svixHeaders(secret: string, body: string, options: { id?: string | null; at?: Date; family?: "svix" | "webhook" } = {}) {
  const at = options.at ?? new Date();
  const id = options.id === undefined ? `msg_${crypto.randomUUID()}` : options.id;
  const family = options.family ?? "svix";
  const headers: Record<string, string> = {
    [`${family}-timestamp`]: String(Math.floor(at.getTime() / 1000)),
    [`${family}-signature`]: new SvixWebhook(secret).sign(id ?? "", at, body),
  };
  if (id !== null) headers[`${family}-id`] = id;
  return headers;
}

describe("Svix senders on a standard source (svix-* headers)", () => {
  it("accepts an event signed by Svix's library, reads its type and dedupes on svix-id", async () => {
    const team = await setupTeam();
    const secret = whsec();
    const source = await createSource(team.key, { provider: "standard", signing_secret: secret });
    const body = JSON.stringify({ type: "user.created", data: { id: "user_1" } });
    const headers = svixHeaders(secret, body, { id: "msg_clerk_1" });
    const res = await ingest(source.slug, body, headers);
    expect(res.status).toBe(202);
    const accepted = (await json(res)).data;
    expect(accepted).toMatchObject({ event_type: "user.created", duplicate: false });
    expect((await getEvent(team.key, source.id, accepted.id)).provider_event_id).toBe("msg_clerk_1");

    // Svix retries a message with the same svix-id and a new timestamp and signature.
    const retry = await ingest(source.slug, body, svixHeaders(secret, body, { id: "msg_clerk_1" }));
    expect((await json(retry)).data).toEqual({ id: accepted.id, event_type: "user.created", duplicate: true, deliveries: 0 });
    expect(await eventCount(source.id)).toBe(1);
  });

  it("still accepts webhook-* headers (signed by the same library) and dedupes on webhook-id", async () => {
    const team = await setupTeam();
    const secret = whsec();
    const source = await createSource(team.key, { provider: "standard", signing_secret: secret });
    const body = JSON.stringify({ type: "email.sent" });
    const first = await json(await ingest(source.slug, body, svixHeaders(secret, body, { id: "msg_std", family: "webhook" })));
    expect(first.data).toMatchObject({ event_type: "email.sent", duplicate: false });
    const again = await json(await ingest(source.slug, body, svixHeaders(secret, body, { id: "msg_std", family: "webhook" })));
    expect(again.data).toMatchObject({ id: first.data.id, duplicate: true });
    expect(await eventCount(source.id)).toBe(1);
  });

  it("refuses a wrong secret, a tampered body, a stale or future timestamp and a missing svix-id with 401, storing nothing", async () => {
    const team = await setupTeam();
    const secret = whsec();
    const source = await createSource(team.key, { provider: "standard", signing_secret: secret });
    const body = JSON.stringify({ type: "user.deleted" });
    await expectError(await ingest(source.slug, body, svixHeaders(whsec(), body)), 401, INVALID);
    await expectError(await ingest(source.slug, body + " ", svixHeaders(secret, body)), 401, INVALID);
    await expectError(await ingest(source.slug, body, svixHeaders(secret, body, { at: new Date(Date.now() - 6 * 60_000) })), 401, INVALID);
    await expectError(await ingest(source.slug, body, svixHeaders(secret, body, { at: new Date(Date.now() + 6 * 60_000) })), 401, INVALID);
    // Signed over an empty id and sent without one: nothing to dedupe on, refused.
    await expectError(await ingest(source.slug, body, svixHeaders(secret, body, { id: null })), 401, INVALID);
    // A signature of one family is never checked against the id of the other.
    const svix = svixHeaders(secret, body, { id: "msg_a" });
    await expectError(
      await ingest(source.slug, body, { "svix-signature": svix["svix-signature"]!, "svix-timestamp": svix["svix-timestamp"]!, "webhook-id": "msg_a" }),
      401,
      INVALID,
    );
    await expectError(await ingest(source.slug, body, { "svix-id": "msg_b", "svix-timestamp": svix["svix-timestamp"]! }), 401, INVALID);
    expect(await eventCount(source.id)).toBe(0);
    // Within the 5-minute tolerance is fine.
    expect((await ingest(source.slug, body, svixHeaders(secret, body, { at: new Date(Date.now() - 4 * 60_000) }))).status).toBe(202);
  });

  it("without a signing secret, svix-id still names the event for dedupe (standard and generic sources)", async () => {
    const team = await setupTeam();
    const standard = await createSource(team.key, { provider: "standard" });
    const generic = await createSource(team.key, { provider: "generic" });
    const body = JSON.stringify({ type: "a.b" });
    for (const source of [standard, generic]) {
      const first = await json(await ingest(source.slug, body, { "svix-id": "msg_unsigned" }));
      expect(first.data.duplicate).toBe(false);
      expect((await getEvent(team.key, source.id, first.data.id)).provider_event_id).toBe("msg_unsigned");
      expect((await json(await ingest(source.slug, body, { "svix-id": "msg_unsigned" }))).data).toMatchObject({ id: first.data.id, duplicate: true });
    }
  });
});

describe("Stripe events signed by the stripe library", () => {
  const stripe = new Stripe("sk_test_relay_signers");
  // Inside workerd the library computes HMACs with SubtleCrypto, which only has the async form.
  const header = (payload: string, secret: string, timestamp?: number) => stripe.webhooks.generateTestHeaderStringAsync({ payload, secret, timestamp });

  it("accepts a valid Stripe-Signature and dedupes on the event id; refuses a wrong secret, a stale timestamp and a missing header", async () => {
    const team = await setupTeam();
    const secret = "whsec_stripe_library_test";
    const source = await createSource(team.key, { provider: "stripe", signing_secret: secret });
    const body = JSON.stringify({ id: "evt_lib_1", object: "event", type: "invoice.paid", data: { object: {} } });
    const res = await ingest(source.slug, body, { "stripe-signature": await header(body, secret) });
    expect(res.status).toBe(202);
    const accepted = (await json(res)).data;
    expect(accepted).toMatchObject({ event_type: "invoice.paid", duplicate: false });
    expect((await getEvent(team.key, source.id, accepted.id)).provider_event_id).toBe("evt_lib_1");
    expect((await json(await ingest(source.slug, body, { "stripe-signature": await header(body, secret) }))).data).toMatchObject({
      id: accepted.id,
      duplicate: true,
    });

    const other = JSON.stringify({ id: "evt_lib_2", object: "event", type: "invoice.paid" });
    await expectError(await ingest(source.slug, other, { "stripe-signature": await header(other, "whsec_other") }), 401, INVALID);
    await expectError(
      await ingest(source.slug, other, { "stripe-signature": await header(other, secret, Math.floor(Date.now() / 1000) - 6 * 60) }),
      401,
      INVALID,
    );
    await expectError(await ingest(source.slug, other, { "stripe-signature": await header(body, secret) }), 401, INVALID);
    await expectError(await ingest(source.slug, other), 401, INVALID);
    expect(await eventCount(source.id)).toBe(1);
  });
});

describe("GitHub events signed by @octokit/webhooks-methods", () => {
  it("accepts X-Hub-Signature-256 from GitHub's library and dedupes on X-GitHub-Delivery; refuses a wrong secret or a tampered body", async () => {
    const team = await setupTeam();
    const secret = "gh-library-secret";
    const source = await createSource(team.key, { provider: "github", signing_secret: secret });
    const body = JSON.stringify({ action: "opened", number: 7 });
    const headers = {
      "x-hub-signature-256": await githubSign(secret, body),
      "x-github-event": "pull_request",
      "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
    };
    const res = await ingest(source.slug, body, headers);
    expect(res.status).toBe(202);
    const accepted = (await json(res)).data;
    expect(accepted).toMatchObject({ event_type: "pull_request", duplicate: false });
    expect((await json(await ingest(source.slug, body, headers))).data).toMatchObject({ id: accepted.id, duplicate: true });
    await expectError(await ingest(source.slug, body, { ...headers, "x-hub-signature-256": await githubSign("not-the-secret", body) }), 401, INVALID);
    await expectError(await ingest(source.slug, body.replace("7", "8"), { ...headers, "x-github-delivery": "other" }), 401, INVALID);
    expect(await eventCount(source.id)).toBe(1);
  });
});

describe("forwarded deliveries carry only the relay's signature (issue 17)", () => {
  it("a Svix-signed event is forwarded without svix-* or any other inbound signature; both svix and standardwebhooks verify it with the destination secret", async () => {
    const team = await setupTeam();
    const secret = whsec();
    const source = await createSource(team.key, { provider: "standard", signing_secret: secret });
    const destination = await createDestination(team.key, source.id);
    const rx = receiver([destination.url]);
    try {
      const body = JSON.stringify({ type: "user.created", data: { id: "user_9" } });
      const inbound: Record<string, string> = {
        ...svixHeaders(secret, body, { id: "msg_forward" }),
        // Every other family a sender (or whoever relayed it before us) may have left on the request.
        "stripe-signature": "t=1,v1=abc",
        "x-hub-signature": "sha1=abc",
        "x-hub-signature-256": "sha256=abc",
        "x-signature": "abc",
        "x-custom": "kept",
      };
      const accepted = (await json(await ingest(source.slug, body, inbound))).data;
      const stored = await getEvent(team.key, source.id, accepted.id);
      // Stored for inspection...
      expect(stored.headers["svix-signature"]).toBe(inbound["svix-signature"]);

      const delivered = await waitFor(async () => rx.received[0]);
      // ...never forwarded.
      const names = [...delivered.headers.keys()];
      expect(names.filter((n) => n.startsWith("svix-") || n.startsWith("x-hub-signature") || n === "stripe-signature" || n === "x-signature")).toEqual([]);
      expect(names.filter((n) => n.startsWith("webhook-")).sort()).toEqual(["webhook-id", "webhook-signature", "webhook-timestamp"]);
      expect(delivered.headers.get("webhook-id")).toBe(stored.deliveries[0].id);
      expect(delivered.headers.get("x-custom")).toBe("kept");

      const headers = Object.fromEntries(delivered.headers);
      expect(() => new SvixWebhook(destination.secret).verify(delivered.body, headers)).not.toThrow();
      expect(() => new StandardWebhook(destination.secret).verify(delivered.body, headers)).not.toThrow();
      // The verifiers are not rubber stamps: another secret, or the sender's headers put back, fail.
      expect(() => new SvixWebhook(whsec()).verify(delivered.body, headers)).toThrow();
      expect(() => new StandardWebhook(destination.secret).verify(delivered.body + " ", headers)).toThrow();
      expect(() =>
        new SvixWebhook(destination.secret).verify(delivered.body, {
          ...headers,
          "svix-id": inbound["svix-id"]!,
          "svix-timestamp": inbound["svix-timestamp"]!,
          "svix-signature": inbound["svix-signature"]!,
        }),
      ).toThrow();
    } finally {
      rx.restore();
    }
  });
});
