// Helpers of the analytics tests: a site over the API, an event sent as a browser would, the
// isolate's event batch settled, a query, and what a site's store holds.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { call, json, type RequestOptions } from "../../helpers/api";
import { analyticsSettled, analyticsStore } from "../../../src/products/analytics/analytics.store";

export const CHROME_UA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
export const FIREFOX_UA = "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0";

export interface Site {
  id: string;
  domain: string;
  keep_query_string: boolean;
  snippet: string;
  created_at: string;
}

export async function createSite(key: string, body: Record<string, unknown> = { domain: "example.com" }): Promise<Site> {
  const res = await call("POST", "analytics/sites", { key, body });
  expect(res.status).toBe(201);
  return (await json(res)).data;
}

/** POST /api/event as a tracker sends it (JSON as text/plain unless `contentType` says otherwise). */
export function sendEvent(
  body: unknown,
  options: { ip?: string; ua?: string; contentType?: string; raw?: string; headers?: Record<string, string> } & Pick<RequestOptions, "env"> = {},
): Promise<Response> {
  return call("POST", "/api/event", {
    raw: options.raw ?? JSON.stringify(body),
    ip: options.ip ?? "198.51.100.7",
    env: options.env,
    headers: { "content-type": options.contentType ?? "text/plain", "user-agent": options.ua ?? CHROME_UA, ...options.headers },
  });
}

export function pageview(siteId: string, url = "https://example.com/", extra: Record<string, unknown> = {}) {
  return { n: "pageview", u: url, d: siteId, ...extra };
}

/** Waits until the isolate's batch has written every event to the stores. */
export function settle(): Promise<void> {
  return analyticsSettled(env);
}

export async function query(
  key: string,
  body: Record<string, unknown>,
): Promise<{ results: Array<{ dimensions: Array<string | null>; metrics: number[] }>; meta: Record<string, unknown> }> {
  const res = await call("POST", "analytics/query", { key, body });
  expect(res.status, await res.clone().text()).toBe(200);
  return json(res);
}

/** Every row of a site's store. */
export function dump(siteId: string) {
  return analyticsStore(env, siteId).dump();
}
