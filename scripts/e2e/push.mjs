// Push over real HTTP: an app with a generated VAPID pair, a subscriber whose endpoint is a local
// https receiver (a throw-away CA that wrangler dev trusts; push endpoints must be https), a
// notification sent through the push-sends queue that arrives encrypted (aes128gcm, decrypted
// here with the subscriber's private key) with a VAPID JWT that verifies, and a 410 from the
// "push service" that removes the subscriber.
import { randomUUID, webcrypto } from "node:crypto";
import { assert, eventually, expectStatus, need, request } from "./http.mjs";
import { startReceiver } from "./receiver.mjs";

const { subtle } = webcrypto;
const encoder = new TextEncoder();
const b64url = (bytes) => Buffer.from(bytes).toString("base64url");
const fromB64url = (text) => new Uint8Array(Buffer.from(text, "base64url"));

/** A browser-side subscription: a P-256 ECDH key pair and a 16-byte auth secret. */
async function browserSubscription(endpoint) {
  const pair = await subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]);
  const publicBytes = new Uint8Array(await subtle.exportKey("raw", pair.publicKey));
  const authBytes = webcrypto.getRandomValues(new Uint8Array(16));
  return { endpoint, keys: { p256dh: b64url(publicBytes), auth: b64url(authBytes) }, privateKey: pair.privateKey, publicBytes, authBytes };
}

async function hkdf(salt, ikm, info, length) {
  const key = await subtle.importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, key, length * 8));
}

/** RFC 8291 / RFC 8188 (aes128gcm, one record) decryption, as the browser does it. */
async function decryptPush(body, sub) {
  const salt = body.subarray(0, 16);
  const idLength = body[20];
  assert.equal(idLength, 65, "the keyid is the 65-byte application server public key");
  const serverPublic = body.subarray(21, 21 + idLength);
  const ciphertext = body.subarray(21 + idLength);
  const serverKey = await subtle.importKey("raw", serverPublic, { name: "ECDH", namedCurve: "P-256" }, false, []);
  const ecdh = new Uint8Array(await subtle.deriveBits({ name: "ECDH", public: serverKey }, sub.privateKey, 256));
  const keyInfo = Buffer.concat([encoder.encode("WebPush: info\0"), sub.publicBytes, serverPublic]);
  const ikm = await hkdf(sub.authBytes, ecdh, keyInfo, 32);
  const cek = await hkdf(salt, ikm, encoder.encode("Content-Encoding: aes128gcm\0"), 16);
  const nonce = await hkdf(salt, ikm, encoder.encode("Content-Encoding: nonce\0"), 12);
  const aes = await subtle.importKey("raw", cek, "AES-GCM", false, ["decrypt"]);
  const padded = new Uint8Array(await subtle.decrypt({ name: "AES-GCM", iv: nonce }, aes, ciphertext));
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  assert.equal(padded[end], 0x02, "the last record ends with the 0x02 delimiter");
  return new TextDecoder().decode(padded.subarray(0, end));
}

/** Verifies an ES256 VAPID JWT against the raw public key (base64url); returns its claims. */
async function verifyVapidJwt(jwt, publicKey) {
  const [header, payload, signature] = jwt.split(".");
  const key = await subtle.importKey("raw", fromB64url(publicKey), { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  const valid = await subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, fromB64url(signature), encoder.encode(`${header}.${payload}`));
  assert.ok(valid, "the VAPID JWT signature verifies with the app's public key");
  return JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
}

export async function pushChecks({ url, createTeamWithKey, defer, tls }) {
  const { key } = await createTeamWithKey({ name: "Push e2e" });
  const receiver = tls ? await startReceiver({ tls, status: 201 }) : null;
  if (receiver) defer(() => receiver.close());
  const api = (method, path, body) => request(url, method, `/api/v1${path}`, { key, body });
  const state = {};
  const needReceiver = () => need(receiver, "the https receiver (openssl could not make a local certificate)");
  // Waits for a push request; on failure the message carries the notification's per-subscriber results.
  const pushRequest = async (predicate, appId, notificationId) => {
    try {
      return await needReceiver().waitFor(predicate);
    } catch (error) {
      const detail = await api("GET", `/push/apps/${appId}/notifications/${notificationId}`);
      throw new Error(`${error.message}; notification ${notificationId}: ${JSON.stringify(detail.body?.data ?? detail.body)}`);
    }
  };

  return {
    "push: create an app; the VAPID public key is returned, never the private key": async () => {
      const app = expectStatus(await api("POST", "/push/apps", { name: "e2e app" }), 201, "create app");
      assert.equal(fromB64url(app.body.data.vapid_public_key).length, 65);
      assert.equal(app.body.data.subscriber_count, 0);
      assert.doesNotMatch(JSON.stringify(app.body), /private|fcm_credentials|apns_credentials/);
      state.app = app.body.data;
    },

    "push: register a subscriber at the local https receiver": async () => {
      const app = need(state.app, "app");
      state.sub = await browserSubscription(`${needReceiver().url}/push/${randomUUID()}`);
      const res = await api("POST", `/push/apps/${app.id}/subscribers`, { endpoint: state.sub.endpoint, expirationTime: null, keys: state.sub.keys });
      expectStatus(res, 201, "register subscriber");
      assert.equal(res.body.data.endpoint, state.sub.endpoint);
      assert.equal(res.body.data.keys, undefined);
      const after = expectStatus(await api("GET", `/push/apps/${app.id}`), 200, "get app");
      assert.equal(after.body.data.subscriber_count, 1);
      state.subscriberId = res.body.data.id;
    },

    "push: a notification arrives encrypted (aes128gcm) with a VAPID header that verifies": async () => {
      const app = need(state.app, "app");
      const sub = need(state.sub, "subscriber");
      const sent = expectStatus(
        await api("POST", `/push/apps/${app.id}/notifications`, { title: "Hello", body: "Your order shipped", data: { order: 42 } }),
        202,
        "send notification",
      );
      assert.equal(sent.body.data.recipients, 1);
      const hit = await pushRequest((r) => r.path === new URL(sub.endpoint).pathname, app.id, sent.body.data.id);
      assert.equal(hit.method, "POST");
      assert.equal(hit.headers["content-encoding"], "aes128gcm");
      assert.ok(Number(hit.headers.ttl) > 0, `TTL header: ${hit.headers.ttl}`);
      const vapid = /^vapid t=([\w-]+\.[\w-]+\.[\w-]+),\s*k=([\w-]+)$/.exec(hit.headers.authorization ?? "");
      assert.ok(vapid, `Authorization header: ${hit.headers.authorization}`);
      assert.equal(vapid[2], app.vapid_public_key);
      const claims = await verifyVapidJwt(vapid[1], app.vapid_public_key);
      assert.equal(claims.aud, new URL(sub.endpoint).origin);
      assert.ok(claims.exp > Date.now() / 1000, "the JWT is not expired");
      const payload = JSON.parse(await decryptPush(new Uint8Array(hit.body), sub));
      assert.deepEqual(payload, {
        notification_id: sent.body.data.id,
        app_id: app.id,
        title: "Hello",
        body: "Your order shipped",
        icon: null,
        url: null,
        data: { order: 42 },
      });
      const done = await eventually(async () => {
        const res = expectStatus(await api("GET", `/push/apps/${app.id}/notifications/${sent.body.data.id}`), 200, "notification detail");
        return res.body.data.status === "completed" ? res.body.data : Promise.reject(new Error(`notification: ${JSON.stringify(res.body.data.counts)}`));
      });
      assert.deepEqual(done.counts, { queued: 0, delivered: 1, failed: 0, removed: 0 });
      assert.equal(done.results[0].status_code, 201);
    },

    "push: a 410 from the push service removes the subscriber": async () => {
      const app = need(state.app, "app");
      need(state.subscriberId, "subscriber");
      needReceiver().status = 410;
      const before = receiver.requests.length;
      const sent = expectStatus(
        await api("POST", `/push/apps/${app.id}/notifications`, { title: "Gone?", body: "This one is refused" }),
        202,
        "send notification",
      );
      await pushRequest((r) => receiver.requests.indexOf(r) >= before, app.id, sent.body.data.id);
      const done = await eventually(async () => {
        const res = expectStatus(await api("GET", `/push/apps/${app.id}/notifications/${sent.body.data.id}`), 200, "notification detail");
        return res.body.data.status === "completed" ? res.body.data : Promise.reject(new Error(`notification: ${JSON.stringify(res.body.data.counts)}`));
      });
      assert.deepEqual(done.counts, { queued: 0, delivered: 0, failed: 0, removed: 1 });
      const after = expectStatus(await api("GET", `/push/apps/${app.id}`), 200, "get app");
      assert.equal(after.body.data.subscriber_count, 0);
      const list = expectStatus(await api("GET", `/push/apps/${app.id}/subscribers`), 200, "list subscribers");
      assert.equal(list.body.data.length, 0);
    },
  };
}
