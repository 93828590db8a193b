// Test helpers of the flags product: a team with a key, flags and client keys made through the API.
import { expect } from "vitest";
import { call, json, setupTeam, type TestTeam } from "../../helpers/api";

export async function flagsTeam(options: { plan?: string; scopes?: string[] } = {}): Promise<TestTeam> {
  return setupTeam(options);
}

export async function createFlag(key: string, body: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const res = await call("POST", "flags", { key, body: { ...body, ...extra } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await json(res)).data;
}

export async function patchFlag(key: string, flag: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return call("PATCH", `flags/${flag}`, { key, body, headers });
}

export async function evaluate(key: string, environment: string, context: Record<string, unknown>, flags?: string[]) {
  const res = await call("POST", "flags/evaluate", { key, body: { environment, context, ...(flags ? { flags } : {}) } });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await json(res)).data.flags;
}

export async function createClientKey(key: string, environment = "production", body: Record<string, unknown> = {}) {
  const res = await call("POST", `flags/environments/${environment}/client-keys`, { key, body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await json(res)).data as { id: string; key: string; prefix: string };
}
