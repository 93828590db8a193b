// Request and response schemas of analytics (sites, the query API, realtime) and the product's fixed
// limits. The event body of POST /api/event is parsed by analytics-event.ts (it accepts JSON sent as
// text/plain, long and short field names, and answers 400 `{error}` as Plausible's Events API does).
import { z } from "@hono/zod-openapi";

/** Sites per team: each is a public ingest target, so a team holds a bounded number. */
export const MAX_SITES_PER_TEAM = 50;
/** Largest event body read (bytes): 30 props of 2,000 characters fit with room to spare; 413 above. */
export const MAX_EVENT_BODY_BYTES = 256 * 1024;
/** Plausible's limits on an event. */
export const MAX_NAME_CHARS = 120;
export const MAX_PROPS = 30;
export const MAX_PROP_VALUE_CHARS = 2000;
export const MAX_PROP_KEY_CHARS = 300;
export const MAX_URL_CHARS = 2000;
/** Rows a query answers at most (Plausible's page size). */
export const MAX_QUERY_LIMIT = 10_000;
/** The source of a visit with no referrer and no tag, as Plausible names it. */
export const DIRECT_SOURCE = "Direct / None";

/**
 * A site's domain: a host name (letters, digits, hyphens, dots; `localhost` allowed), stored lower
 * case without a leading `www.` (Plausible strips it too), so events from `www.` count.
 */
const domain = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/,
    "must be a host name like example.com (no scheme, port or path)",
  )
  .transform((host) => (host.startsWith("www.") && host.length > 4 ? host.slice(4) : host))
  .openapi({
    description:
      "The host the site's pages are served from, like `example.com`; a leading `www.` is dropped. Events from this host or any host under it count.",
  });

const keepQueryString = z.boolean().openapi({
  description:
    "Keep the query string in a page's path (default false: the pathname only, as Plausible does; `utm_source`, `source` and `ref` still name the source).",
});

export const CreateSiteBody = z.strictObject({ domain, keep_query_string: keepQueryString.default(false) }).openapi("CreateAnalyticsSite");
export const PatchSiteBody = z.strictObject({ domain: domain.optional(), keep_query_string: keepQueryString.optional() }).openapi("PatchAnalyticsSite");

export const SiteSchema = z
  .object({
    id: z.string().uuid().openapi({ description: "The site id: what the tracker sends as `domain` (`data-domain`)." }),
    domain: z.string(),
    keep_query_string: z.boolean(),
    snippet: z.string().openapi({ description: "The script tag to put on the site's pages." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("AnalyticsSite");

export const SiteParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });

export const METRICS = ["visitors", "pageviews", "events"] as const;
export const DIMENSIONS = ["event:page", "event:name", "visit:source", "visit:country", "time:hour", "time:day"] as const;
export type Metric = (typeof METRICS)[number];
export type Dimension = (typeof DIMENSIONS)[number];
/** Dimensions a filter may name (time is the date range's). */
export const FILTER_DIMENSIONS = ["event:page", "event:name", "visit:source", "visit:country"] as const;
export type FilterDimension = (typeof FILTER_DIMENSIONS)[number];

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date YYYY-MM-DD");

export const QueryBody = z
  .strictObject({
    site_id: z.string().min(1),
    metrics: z.array(z.enum(METRICS)).min(1).max(METRICS.length),
    date_range: z.union([z.enum(["day", "7d", "30d", "month"]), z.tuple([isoDate, isoDate])]).openapi({
      description:
        "`day` (today, UTC), `7d` and `30d` (the last 7 or 30 UTC days, today included), `month` (this UTC month), or `[from, to]` UTC dates, both included.",
    }),
    dimensions: z.array(z.enum(DIMENSIONS)).max(DIMENSIONS.length).default([]),
    filters: z
      .array(z.tuple([z.enum(["is", "is_not", "contains"]), z.enum(FILTER_DIMENSIONS), z.array(z.string().max(MAX_URL_CHARS)).min(1).max(100)]))
      .max(20)
      .default([]),
    order_by: z
      .array(z.tuple([z.union([z.enum(METRICS), z.enum(DIMENSIONS)]), z.enum(["asc", "desc"])]))
      .max(DIMENSIONS.length + METRICS.length)
      .optional(),
    limit: z.number().int().min(1).max(MAX_QUERY_LIMIT).default(MAX_QUERY_LIMIT),
  })
  .openapi("AnalyticsQuery");
export type Query = z.infer<typeof QueryBody>;

export const QueryResultSchema = z
  .object({
    results: z.array(
      z.object({
        dimensions: z.array(z.string().nullable()),
        metrics: z.array(z.number()),
      }),
    ),
    meta: z.object({
      site_id: z.string(),
      date_range: z.tuple([z.string(), z.string()]).openapi({ description: "The range answered, as ISO instants (from included, to excluded)." }),
      metrics: z.array(z.string()),
      dimensions: z.array(z.string()),
      total_rows: z.number().int(),
    }),
  })
  .openapi("AnalyticsQueryResult");

export const RealtimeSchema = z.object({ visitors: z.number().int(), since: z.string() }).openapi("AnalyticsRealtime");
export const AnalyticsErrorSchema = z.object({ error: z.string(), details: z.record(z.string(), z.array(z.string())).optional() }).openapi("AnalyticsError");
