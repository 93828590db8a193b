/** @jsxImportSource hono/jsx */
// The console's analytics pages: the team's sites with a form to add one (developers and above;
// POST answers 303 to the new site), and one site's dashboard over a chosen range (today by hour,
// 7 or 30 days or this month by day): the realtime count, visitors and pageviews as SVG charts with
// their tables for screen readers (src/console/charts.tsx), top pages, sources and countries, and
// the snippet. Members only (the console's session and team middleware); the same services as
// /api/v1/analytics, so no page holds an address or a user agent either.
import { Hono, type Context } from "hono";
import { BarChart, formatNumber, SeriesChart, type Datum, type Point } from "../../../console/charts";
import { formText } from "../../../console/forms";
import { Time } from "../../../console/layout";
import { CopyBlock, TableWrap, ColumnHeads } from "../../../console/pages/parts";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { settings } from "../../../platform/config";
import { ApiError, zodDetails } from "../../../platform/errors";
import { CreateSiteBody, type Dimension, type Query } from "../analytics.schemas";
import { realtimeVisitors, runQuery } from "../analytics-query.service";
import { createSite, getSite, listSites } from "../analytics-sites.service";

export const analyticsPages = new Hono<ConsoleEnv>();

const canWrite = (c: Context<ConsoleEnv>) => roleAtLeast(c.get("consoleTeam").role, "developer");

const RANGES = { day: "Today", "7d": "Last 7 days", "30d": "Last 30 days", month: "This month" } as const;
type Range = keyof typeof RANGES;

analyticsPages.get("/analytics", async (c) => {
  const sites = await listSites(c.env, c.get("consoleTeam").id);
  const api = `${settings(c.env).appUrl}/api/v1`;
  return page(
    c,
    { title: "Analytics", active: "analytics" },
    <section class="section">
      {sites.length === 0 ? (
        <>
          <h2>Add your first site</h2>
          <p>Cookieless page and event counts: no address or user agent is stored, and visitors are counted with a hash that changes every day.</p>
        </>
      ) : (
        <TableWrap label="Sites of the team">
          <table>
            <caption class="skip">Sites of the team</caption>
            <ColumnHeads names={["Domain", "Site id", "Created"]} />
            <tbody>
              {sites.map((site) => (
                <tr data-testid="analytics-site-row">
                  <td>
                    <a href={teamPath(c, `analytics/sites/${site.id}`)}>{site.domain}</a>
                  </td>
                  <td class="mono">{site.id}</td>
                  <td>
                    <Time iso={site.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {canWrite(c) ? (
        <form method="post" action={teamPath(c, "analytics")} class="inline-form" data-testid="create-analytics-site">
          <div class="field">
            <label for="site-domain">Domain</label>
            <input id="site-domain" type="text" name="domain" required maxlength={253} placeholder="example.com" />
          </div>
          <button type="submit">Add site</button>
        </form>
      ) : null}
      <p class="muted">
        Or over the API with a key that has <code>analytics:write</code>:
      </p>
      <CopyBlock
        id="create-site-curl"
        text={`curl -X POST ${api}/analytics/sites \\\n  -H "Authorization: Bearer $EDP_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"domain": "example.com"}'`}
      />
    </section>,
  );
});

analyticsPages.post("/analytics", async (c) => {
  requireRole(c, "developer");
  const parsed = CreateSiteBody.safeParse({ domain: await formText(c, "domain") });
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  const site = await createSite(c.env, c.get("consoleTeam").id, parsed.data);
  return redirectTo(c, `analytics/sites/${site.id}`, "created");
});

/** The site's breakdown by one dimension: top 10 by visitors. */
async function top(c: Context<ConsoleEnv>, siteId: string, range: Range, dimension: Dimension): Promise<Datum[]> {
  const answer = await runQuery(c.env, c.get("consoleTeam").id, query(siteId, range, ["visitors"], [dimension], 10));
  return answer.results.map((row) => ({ label: row.dimensions[0] ?? "Unknown", value: row.metrics[0] ?? 0 }));
}

function query(siteId: string, range: Range, metrics: Query["metrics"], dimensions: Dimension[], limit: number): Query {
  return { site_id: siteId, metrics, date_range: range, dimensions, filters: [], limit };
}

/** Every hour of today or day of the range, with its value (0 where none). */
function series(range: Range, now: number, rows: Array<{ dimensions: Array<string | null>; metrics: number[] }>, metric: number): Point[] {
  const byKey = new Map(rows.map((row) => [row.dimensions[0] ?? "", row.metrics[metric] ?? 0]));
  const day = Math.floor(now / 86_400_000) * 86_400_000;
  if (range === "day") {
    return Array.from({ length: 24 }, (_, h) => {
      const key = `${new Date(day + h * 3_600_000).toISOString().slice(0, 13).replace("T", " ")}:00:00`;
      return { label: `${key.slice(0, 16)} UTC`, tick: `${String(h).padStart(2, "0")}h`, value: byKey.get(key) ?? 0 };
    });
  }
  const d = new Date(now);
  const from = range === "month" ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) : day - (range === "7d" ? 6 : 29) * 86_400_000;
  const to = range === "month" ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) : day + 86_400_000;
  const days: Point[] = [];
  for (let t = from; t < to; t += 86_400_000) {
    const key = new Date(t).toISOString().slice(0, 10);
    days.push({ label: key, tick: key.slice(5), value: byKey.get(key) ?? 0 });
  }
  return days;
}

analyticsPages.get("/analytics/sites/:site_id", async (c) => {
  const teamId = c.get("consoleTeam").id;
  const site = await getSite(c.env, teamId, c.req.param("site_id"));
  const asked = c.req.query("range") ?? "7d";
  const range: Range = Object.hasOwn(RANGES, asked) ? (asked as Range) : "7d";
  const time: Dimension = range === "day" ? "time:hour" : "time:day";
  const [totals, overTime, pages, sources, countries, realtime] = await Promise.all([
    runQuery(c.env, teamId, query(site.id, range, ["visitors", "pageviews"], [], 1)),
    runQuery(c.env, teamId, query(site.id, range, ["visitors", "pageviews"], [time], 1000)),
    top(c, site.id, range, "event:page"),
    top(c, site.id, range, "visit:source"),
    top(c, site.id, range, "visit:country"),
    realtimeVisitors(c.env, teamId, site.id),
  ]);
  const now = Date.parse(totals.meta.date_range[1]) - 1;
  const [visitors = 0, pageviews = 0] = totals.results[0]?.metrics ?? [];
  const base = teamPath(c, `analytics/sites/${site.id}`);
  const label = RANGES[range];
  return page(
    c,
    { title: site.domain, active: "analytics", notices: { created: "Site added: put the snippet below on its pages." } },
    <>
      <div class="row-actions">
        <a href={teamPath(c, "analytics")}>← Sites</a>
      </div>
      <nav aria-label="Date range" class="row-actions">
        {(Object.keys(RANGES) as Range[]).map((key) =>
          key === range ? (
            <strong aria-current="page">{RANGES[key]}</strong>
          ) : (
            <a href={`${base}?range=${key}`} data-testid={`range-${key}`}>
              {RANGES[key]}
            </a>
          ),
        )}
      </nav>
      <div class="stats">
        <div class="stat">
          <span class="label">Visitors now (last 5 minutes)</span>
          <span class="value" data-testid="realtime-visitors">
            {String(realtime.visitors)}
          </span>
        </div>
        <div class="stat">
          <span class="label">{`Visitors, ${label.toLowerCase()}`}</span>
          <span class="value" data-testid="total-visitors">
            {formatNumber(visitors)}
          </span>
        </div>
        <div class="stat">
          <span class="label">{`Pageviews, ${label.toLowerCase()}`}</span>
          <span class="value" data-testid="total-pageviews">
            {formatNumber(pageviews)}
          </span>
        </div>
      </div>
      <section class="section" aria-labelledby="over-time-title">
        <h2 id="over-time-title">{range === "day" ? "Today, by hour (UTC)" : `${label}, by day (UTC)`}</h2>
        {(
          [
            ["visitors", "Visitors", 0],
            ["pageviews", "Pageviews", 1],
          ] as const
        ).map(([id, name, metric]) => (
          <SeriesChart
            id={`${id}-chart`}
            caption={`${name}, ${label.toLowerCase()}`}
            unit={id}
            points={series(range, now, overTime.results, metric)}
            tickEvery={range === "day" ? 3 : range === "7d" ? 1 : 5}
          />
        ))}
      </section>
      {(
        [
          ["pages", "Top pages", pages],
          ["sources", "Top sources", sources],
          ["countries", "Countries", countries],
        ] as const
      ).map(([id, title, data]) => (
        <section class="section" aria-labelledby={`${id}-title`}>
          <h2 id={`${id}-title`}>{title}</h2>
          {data.length === 0 ? (
            <p class="muted">Nothing in this range yet.</p>
          ) : (
            <BarChart id={`${id}-chart`} title={`${title}, by visitors`} data={[...data]} />
          )}
        </section>
      ))}
      <section class="section" aria-labelledby="snippet-title">
        <h2 id="snippet-title">Snippet</h2>
        <p class="muted">
          Put it in the <code>&lt;head&gt;</code> of every page of <code>{site.domain}</code>. Custom events:{" "}
          <code>
            plausible("Signup", {"{"} props: {"{"} plan: "pro" {"}"} {"}"})
          </code>
          .
        </p>
        <CopyBlock id="site-snippet" text={site.snippet} />
      </section>
    </>,
  );
});
