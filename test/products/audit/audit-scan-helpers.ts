// Shared set-up of the scan tests: targets played by an intercepted fetch (each origin a handler,
// names resolved by a played DNS-over-HTTPS resolver at the pool's DNS_RESOLVER_URL), scans
// started over the API and run by the Worker's own queue handler (a played audit-scans queue).
import { env } from "cloudflare:test";
import { expect, vi } from "vitest";
import { call, json } from "../../helpers/api";
import { playedQueue } from "../../helpers/queues";

export const RESOLVER = "http://127.0.0.1:9/dns-query";

/** Headers of a site that passes every test. */
export const GOOD_HEADERS: Record<string, string> = {
  "content-security-policy": "default-src 'none'; script-src 'self'; frame-ancestors 'none'",
  "strict-transport-security": "max-age=31536000",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

export type Handler = (request: Request) => Response | Promise<Response>;

export interface Targets {
  /** Every URL fetched (resolver look-ups apart), in order. */
  fetched: string[];
  /** The names asked of the resolver. */
  resolved: string[];
  /** Replaces the handler of an origin. */
  set(origin: string, handler: Handler): void;
}

/**
 * Intercepts fetch: the resolver answers from `dns` (a name absent from it resolves to a public
 * documentation-free address, 93.184.216.34; `null` is NXDOMAIN), each origin of `sites` answers
 * with its handler, and any other origin refuses the connection. An origin `http://<host>` not
 * listed refuses too (no plain http: the redirection test's "not needed" case).
 */
export function interceptTargets(sites: Record<string, Handler>, dns: Record<string, string[] | null> = {}): Targets {
  const handlers = new Map(Object.entries(sites));
  const fetched: string[] = [];
  const resolved: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    const url = new URL(request.url);
    if (`${url.origin}${url.pathname}` === RESOLVER) {
      const name = url.searchParams.get("name")!;
      const type = url.searchParams.get("type");
      resolved.push(name);
      const addresses = Object.hasOwn(dns, name) ? dns[name] : ["93.184.216.34"];
      if (addresses === null) return Response.json({ Status: 3 });
      const wanted = addresses.filter((a) => (type === "AAAA" ? a.includes(":") : !a.includes(":")));
      return Response.json({ Status: 0, Answer: wanted.map((data) => ({ name, type: type === "AAAA" ? 28 : 1, TTL: 60, data })) });
    }
    fetched.push(request.url);
    const handler = handlers.get(url.origin);
    if (!handler) throw new TypeError(`connection refused: ${url.origin}`);
    return handler(request);
  });
  return { fetched, resolved, set: (origin, handler) => handlers.set(origin, handler) };
}

/** A handler answering 200 with these headers (and Set-Cookie lines). */
export const answer =
  (headers: Record<string, string>, cookies: string[] = [], status = 200): Handler =>
  () => {
    const h = new Headers(headers);
    for (const c of cookies) h.append("set-cookie", c);
    return new Response("<!doctype html><title>ok</title>", { status, headers: h });
  };

/** A plain-http handler redirecting to the same host on https. */
export const toHttps: Handler = (request) => {
  const url = new URL(request.url);
  return new Response(null, { status: 301, headers: { location: `https://${url.host}${url.pathname}` } });
};

/** Starts a scan over the API with a played queue; `run()` delivers it through the Worker's queue handler. */
export async function startScan(key: string, base: string, target: string, expectStatus = 202) {
  const queue = playedQueue("audit-scans");
  const res = await call("POST", `${base}/scans`, { key, body: { target_url: target }, env: queue.env });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(expectStatus);
  return {
    scan: body.data as { id: string; status: string; target_url: string },
    queue,
    async run() {
      const deliveries = await queue.deliver();
      for (const d of deliveries) expect(d.outcome).toBe("acked");
      return getScan(key, base, body.data.id);
    },
  };
}

export async function getScan(key: string, base: string, id: string) {
  const res = await call("GET", `${base}/scans/${id}`, { key });
  expect(res.status).toBe(200);
  return (await json(res)).data;
}

/** The project's findings, all of them. */
export async function findings(key: string, base: string) {
  const res = await call("GET", `${base}/findings?per_page=100`, { key });
  expect(res.status).toBe(200);
  return (await json(res)).data as Array<{
    id: string;
    status: string;
    source: string;
    test: string | null;
    target_url: string | null;
    priority_score: number;
    regression: boolean;
  }>;
}

export { env };
