// Key rotation: ENCRYPTION_KEY_PREVIOUS keeps secrets sealed with the old key readable, and
// SIGNING_KEY_PREVIOUS keeps links signed with the old key valid, while new values use the new key.
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { decryptSecret, encryptSecret, hmacSha256, signToken, toHex, verifyToken } from "../../src/platform/crypto";
import { anyIp, json } from "../helpers/api";
import { call, setupTeam } from "./fixtures";

const OLD_KEY = env.ENCRYPTION_KEY;
const NEW_KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const OLD_SIGNING = env.SIGNING_KEY;
const NEW_SIGNING = "rotated-signing-key-0123456789abcdef";

describe("crypto primitives", () => {
  it("decryptSecret opens old values with the previous key, and only then", async () => {
    const sealed = await encryptSecret(OLD_KEY, "s3cret");
    await expect(decryptSecret(NEW_KEY, sealed)).rejects.toThrow();
    expect(await decryptSecret(NEW_KEY, sealed, OLD_KEY)).toBe("s3cret");
    expect(await decryptSecret(NEW_KEY, await encryptSecret(NEW_KEY, "fresh"), OLD_KEY)).toBe("fresh");
    const other = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
    await expect(decryptSecret(NEW_KEY, sealed, other)).rejects.toThrow();
  });

  it("verifyToken accepts tokens of the previous signing key while it is set", async () => {
    const token = await signToken(OLD_SIGNING, { k: "x" });
    expect(await verifyToken(NEW_SIGNING, token)).toBeNull();
    expect(await verifyToken(NEW_SIGNING, token, OLD_SIGNING)).toEqual({ k: "x" });
    expect(await verifyToken(NEW_SIGNING, token, "some-other-key")).toBeNull();
    expect(await verifyToken(NEW_SIGNING, `${token.split(".")[0]}.AAAA`, OLD_SIGNING)).toBeNull();
  });
});

describe("rotation through the API", () => {
  it("a relay source's signing secret sealed before the rotation still verifies inbound webhooks", async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const secret = "generic-signing-secret";
    const source = (await json(await call("POST", "webhooks/sources", { key: team.key, body: { name: "s", provider: "generic", signing_secret: secret } })))
      .data;
    const body = '{"type":"rotated"}';
    const headers = { "content-type": "application/json", "x-signature": toHex(await hmacSha256(secret, body)) };
    const rotated = { ...(env as Env), ENCRYPTION_KEY: NEW_KEY, ENCRYPTION_KEY_PREVIOUS: OLD_KEY };
    expect((await call("POST", `/in/${source.slug}`, { raw: body, headers, ip: anyIp(), env: rotated })).status).toBe(202);
    // A secret set after the rotation is sealed with the new key and needs no previous key.
    await call("PATCH", `webhooks/sources/${source.id}`, { key: team.key, env: rotated, body: { signing_secret: "after-rotation" } });
    const row = await env.DB.prepare("SELECT signing_secret FROM webhook_sources WHERE id = ?").bind(source.id).first<{ signing_secret: string }>();
    expect(await decryptSecret(NEW_KEY, row!.signing_secret)).toBe("after-rotation");
    const newBody = '{"type":"after"}';
    const newHeaders = { "content-type": "application/json", "x-signature": toHex(await hmacSha256("after-rotation", newBody)) };
    const onlyNew = { ...(env as Env), ENCRYPTION_KEY: NEW_KEY };
    expect((await call("POST", `/in/${source.slug}`, { raw: newBody, headers: newHeaders, ip: anyIp(), env: onlyNew })).status).toBe(202);
  });

  it("an audit share link signed before a SIGNING_KEY rotation resolves while SIGNING_KEY_PREVIOUS is set, and not after", async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const base = `orgs/${team.teamId}/projects/rotation/audit`;
    const share = await call("POST", `${base}/reports/share`, { key: team.key, body: { channel: "link" } });
    expect(share.status).toBe(200);
    const url = new URL((await json(share)).data.share_url);
    vi.spyOn(console, "error").mockImplementation(() => {});
    const during = { ...(env as Env), SIGNING_KEY: NEW_SIGNING, SIGNING_KEY_PREVIOUS: OLD_SIGNING };
    expect((await call("GET", url.pathname, { ip: anyIp(), env: during })).status).toBe(200);
    const after = { ...(env as Env), SIGNING_KEY: NEW_SIGNING };
    expect((await call("GET", url.pathname, { ip: anyIp(), env: after })).status).toBe(404);
  });
});
