// The public side of analytics, Plausible-compatible: POST {APP_URL}/api/event (no credential, the
// `public` bucket, CORS for browsers) and GET {APP_URL}/a/script.js, the tracker (built by
// scripts/build-assets.mjs from client/tracker.ts into the static assets, which Cloudflare serves
// before the Worker; this route answers where the assets are reached through the Worker only).
import { z } from "@hono/zod-openapi";
import { cors } from "hono/cors";
import { readBodyCapped, tooLargeMessage } from "../../platform/body";
import { ApiError } from "../../platform/errors";
import { jsonResponse, RateLimitErrorSchema } from "../../platform/openapi";
import { clientIp, countBeside, ipKey, refuseRemembered, type CountNetwork } from "../../platform/rate-limit/middleware";
import { backgroundOrDetached } from "../../platform/request-context";
import { createRouter } from "../../platform/router";
import { analyticsErrorFormat, publicRoute } from "./analytics.openapi";
import { AnalyticsErrorSchema, MAX_EVENT_BODY_BYTES } from "./analytics.schemas";
import { receiveEvent } from "./analytics-ingest.service";

export const analyticsEventRouter = createRouter({ errorFormat: analyticsErrorFormat });

// Any page may send events (the site check is the event URL's host): Plausible answers `*` too.
analyticsEventRouter.use("*", cors({ origin: "*", allowMethods: ["POST", "OPTIONS"], allowHeaders: ["Content-Type"], maxAge: 86_400 }));

analyticsEventRouter.openapi(
  publicRoute({
    method: "post",
    path: "/",
    operationId: "sendAnalyticsEvent",
    summary: "Record a pageview or custom event (Plausible Events API)",
    description:
      "No credential; the `public` bucket (200 requests per 60 s per client IP), then per site and client network at most 120 events a minute and 1/50 of the team's monthly `events` limit a UTC day (429). The body is JSON, sent as `application/json` or `text/plain`, with `name`/`n`, `url`/`u`, `domain`/`d` (the site id), optional `referrer`/`r` and `props`/`p` (at most 30 keys, values of at most 2,000 characters); unknown fields are ignored. 400 `{error}` when malformed; 404 for an unknown site. Known bots (the `isbot` package's list; no user agent counts as a bot), URLs off the site's domain and Plausible's `engagement` events (scroll depth, time on page) are answered 202 with `x-analytics-dropped` and not counted. A counted event spends one `events` unit (monthly 429 past the plan's limit). The visitor is `hash(daily salt, site id, ip, user agent)`; the address and user agent are never stored.",
    body: { own: MAX_EVENT_BODY_BYTES },
    responses: {
      202: { description: "Accepted (`ok`); counted unless `x-analytics-dropped` says why not", content: { "text/plain": { schema: z.literal("ok") } } },
      400: jsonResponse("Malformed event", AnalyticsErrorSchema),
      404: jsonResponse("Unknown site", AnalyticsErrorSchema),
      413: jsonResponse(tooLargeMessage(MAX_EVENT_BODY_BYTES), AnalyticsErrorSchema),
      429: jsonResponse("The public bucket, a per-site-and-network cap, or the monthly quota", RateLimitErrorSchema),
      503: jsonResponse("The usage meter is unreachable; retry", AnalyticsErrorSchema),
    },
  }),
  async (c) => {
    // A network this isolate knows refused is answered at once; otherwise the bucket is counted
    // once the site is known, with the site's caps for the network in the same call (receiveEvent),
    // or alone for an event refused before; its refusal still comes first.
    const ip = clientIp(c);
    const key = ipKey(c);
    refuseRemembered(c, "public", key);
    const count: CountNetwork = (caps) => countBeside(c, "public", key, caps);
    let text: string;
    try {
      const bytes = await readBodyCapped(c.req.raw, MAX_EVENT_BODY_BYTES, () => new ApiError("payload_too_large", tooLargeMessage(MAX_EVENT_BODY_BYTES)));
      text = new TextDecoder().decode(bytes);
    } catch (error) {
      throw (await count()) ?? error;
    }
    const background = backgroundOrDetached(c);
    const country = (c.req.raw.cf?.country as string | undefined) ?? null;
    const dropped = await receiveEvent(c.env, text, { ip, userAgent: c.req.header("user-agent") ?? "", country }, background, count);
    if (dropped) c.header("x-analytics-dropped", dropped);
    return c.text("ok", 202);
  },
);

export const analyticsScriptRouter = createRouter({ errorFormat: analyticsErrorFormat });

analyticsScriptRouter.openapi(
  publicRoute({
    method: "get",
    path: "/script.js",
    operationId: "getAnalyticsScript",
    summary: "The tracker script",
    description:
      'Under 2 KB, no cookie: `<script defer data-domain="<site id>" src="{APP_URL}/a/script.js"></script>` sends a pageview on load and on every history navigation, and `window.plausible("Signup", {props: {plan: "pro"}})` sends a custom event, with `sendBeacon` (to `data-api`, default `/api/event` of the script\'s origin).',
    responses: {
      200: { description: "The script", content: { "text/javascript": { schema: z.string() } } },
      404: jsonResponse("Assets not built", AnalyticsErrorSchema),
    },
  }),
  async (c) => {
    const asset = await c.env.ASSETS.fetch(new Request(new URL("/a/script.js", c.req.url)));
    if (!asset.ok) throw ApiError.notFound("Tracker not built (npm run build:assets)");
    return new Response(asset.body, { status: 200, headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600" } });
  },
);
