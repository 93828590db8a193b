// Push apps: list, read, create (with the VAPID key pair: generated, derived or checked), update,
// delete. The VAPID private key and the FCM/APNs credentials are stored encrypted and never leave
// this file in a response shape. Subscribers and notifications are push-subscribers.service.ts and
// push-notifications.service.ts; both find their app through loadApp.
import { insertUnderCap } from "../../platform/caps";
import { desc } from "drizzle-orm";
import type { z } from "@hono/zod-openapi";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { pushApps } from "../../db/schema";
import { nowIso } from "../../platform/clock";
import { encryptSecret } from "../../platform/crypto";
import { ApiError, type FieldErrors } from "../../platform/errors";
import { orNotFound, ownedBy, ownedRow } from "../../platform/tenancy";
import { inStore, pushStore } from "./push.store";
import { derivePublicKey, generateVapidKeys, keysMatch, publicKeyProblem } from "./vapid";
import type { CreateAppSchema, UpdateAppSchema } from "./push.schemas";

export const appNotFound = () => new ApiError("not_found", "App not found");

export type AppRow = typeof pushApps.$inferSelect;

/** The public shape of an app: no private key, no credentials. */
export function toApp(row: AppRow) {
  return {
    id: row.id,
    name: row.name,
    vapid_public_key: row.vapidPublicKey,
    subscriber_count: row.subscriberCount,
    settings: row.settings,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export async function listApps(env: Env, teamId: string) {
  const rows = await getDb(env.DB).select().from(pushApps).where(ownedBy(pushApps, teamId)).orderBy(desc(pushApps.createdAt), desc(pushApps.id));
  return rows.map(toApp);
}

export async function loadApp(env: Env, teamId: string, appId: string): Promise<AppRow> {
  const rows = await getDb(env.DB)
    .select()
    .from(pushApps)
    .where(ownedRow(pushApps, teamId, appId))
    .limit(1);
  return orNotFound(rows[0], appNotFound);
}

export async function getApp(env: Env, teamId: string, appId: string) {
  return toApp(await loadApp(env, teamId, appId));
}

/**
 * The key pair to store: generated when neither key is given, the public key derived when only
 * the private key is given, and a supplied pair checked to belong together.
 */
async function resolveVapidKeys(publicKey: string | undefined, privateKey: string | undefined) {
  if (publicKey === undefined && privateKey === undefined) return generateVapidKeys();
  const details: FieldErrors = {};
  if (publicKey !== undefined) {
    const problem = await publicKeyProblem(publicKey);
    if (problem) details.vapid_public_key = [problem];
  }
  if (privateKey === undefined) {
    details.vapid_private_key = ["is required when vapid_public_key is supplied (no private key can be generated for a given public key)"];
    throw ApiError.validation(details);
  }
  const derived = await derivePublicKey(privateKey);
  if (!derived) details.vapid_private_key = ["must be a base64url-encoded 32-byte P-256 private key (the JWK `d`)"];
  if (Object.keys(details).length) throw ApiError.validation(details);
  if (publicKey === undefined) return { publicKey: derived!, privateKey };
  if (derived !== publicKey || !(await keysMatch(publicKey, privateKey))) {
    throw ApiError.validation({ vapid_private_key: ["does not match vapid_public_key"] });
  }
  return { publicKey, privateKey };
}

async function sealCredentials(env: Env, value: unknown): Promise<string | null> {
  if (value === null || value === undefined) return null;
  return encryptSecret(env.ENCRYPTION_KEY, typeof value === "string" ? value : JSON.stringify(value));
}

export async function createApp(env: Env, teamId: string, input: z.infer<typeof CreateAppSchema>) {
  const keys = await resolveVapidKeys(input.vapid_public_key, input.vapid_private_key);
  const now = nowIso();
  const row: AppRow = {
    id: crypto.randomUUID(),
    teamId,
    name: input.name,
    vapidPublicKey: keys.publicKey,
    vapidPrivateKeyEnc: await encryptSecret(env.ENCRYPTION_KEY, keys.privateKey),
    fcmCredentialsEnc: await sealCredentials(env, input.fcm_credentials),
    apnsCredentialsEnc: await sealCredentials(env, input.apns_credentials),
    settings: input.settings ?? {},
    subscriberCount: 0,
    subscriberCountSeq: 0,
    createdAt: now,
    updatedAt: now,
  };
  // A team holds a bounded number of apps (held under parallel creates).
  if (!(await insertUnderCap(getDb(env.DB), pushApps, row, { column: pushApps.teamId, value: teamId }, MAX_APPS_PER_TEAM))) {
    throw ApiError.validation({ name: [`a team can have at most ${MAX_APPS_PER_TEAM} push apps`] });
  }
  return toApp(row);
}

/** Push apps per team. */
export const MAX_APPS_PER_TEAM = 50;

export async function updateApp(env: Env, teamId: string, appId: string, input: z.infer<typeof UpdateAppSchema>) {
  const changes: Partial<AppRow> = { updatedAt: nowIso() };
  if (input.name !== undefined) changes.name = input.name;
  if (input.settings !== undefined) changes.settings = input.settings;
  if (input.fcm_credentials !== undefined) changes.fcmCredentialsEnc = await sealCredentials(env, input.fcm_credentials);
  if (input.apns_credentials !== undefined) changes.apnsCredentialsEnc = await sealCredentials(env, input.apns_credentials);
  const rows = await getDb(env.DB)
    .update(pushApps)
    .set(changes)
    .where(ownedRow(pushApps, teamId, appId))
    .returning();
  return toApp(orNotFound(rows[0], appNotFound));
}

/**
 * Deletes the app: its store (subscribers, deliveries) is wiped first, then the row, with its
 * notifications (FK cascade). A store that fails answers 503 and the app stays whole.
 */
export async function deleteApp(env: Env, teamId: string, appId: string): Promise<void> {
  await loadApp(env, teamId, appId);
  await inStore(() => pushStore(env, appId).destroy());
  const rows = await getDb(env.DB)
    .delete(pushApps)
    .where(ownedRow(pushApps, teamId, appId))
    .returning({ id: pushApps.id });
  orNotFound(rows[0], appNotFound);
}
