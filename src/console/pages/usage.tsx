/** @jsxImportSource hono/jsx */
// The usage page: each metered service of the team's plan this month (used, limit, a bar with the
// 80 % and 95 % marks, a daily chart of the month) and the current rate-limit window. Every
// member reads it. The figures come from readUsage (platform/usage/read-usage.ts), the same numbers GET
// /api/v1/usage answers.
import { Hono } from "hono";
import { SERVICES, type Service } from "../../platform/plans";
import { DailyChart, formatNumber, monthDays, percentOf, UsageBar } from "../charts";
import { Time } from "../layout";
import { page } from "../render";
import type { ConsoleEnv } from "../session";
import { readUsage } from "../../platform/usage/read-usage";

export const usagePages = new Hono<ConsoleEnv>();

/** How the page names each service and the unit it counts. */
export const SERVICE_LABELS: Record<Service, { label: string; unit: string }> = {
  mail: { label: "Mail", unit: "emails" },
  ai: { label: "AI (audit)", unit: "AI units" },
  surveys: { label: "Survey responses", unit: "responses" },
  push: { label: "Push notifications", unit: "notifications" },
  webhooks: { label: "Webhook relay", unit: "events" },
  logs: { label: "Log ingest", unit: "MB" },
  flags: { label: "Flag evaluations", unit: "evaluations" },
};

const monthName = (period: string) => new Date(`${period}-01T00:00:00Z`).toLocaleString("en-US", { month: "long", year: "numeric", timeZone: "UTC" });

usagePages.get("/usage", async (c) => {
  const team = c.get("consoleTeam");
  const usage = await readUsage(c.env, team.id, team.plan);
  const { month, window } = usage;
  return page(
    c,
    { title: "Usage", active: "usage" },
    <>
      <p class="muted">
        {monthName(month.period)} (UTC), {team.plan} plan. Warnings are mailed to the owner at 80 % and 95 % of a limit; past the limit, requests answer 429
        until the 1st of next month.
      </p>
      <section
        class="section"
        aria-labelledby="window-title"
        data-testid="rate-limit-window"
        data-limit={window.limit ?? "unlimited"}
        data-remaining={window.remaining ?? "unlimited"}
      >
        <h2 id="window-title">Rate limit</h2>
        {window.limit === null ? (
          <p>Your plan has no per-minute rate limit.</p>
        ) : (
          <p>
            <strong>{formatNumber(window.limit - (window.remaining ?? window.limit))}</strong> of {formatNumber(window.limit)} requests used in the current
            minute (shared by every key of the team); the window resets at <Time iso={new Date(window.reset * 1000).toISOString().slice(0, 19) + "Z"} />.
          </p>
        )}
      </section>
      <section class="section usage-grid" aria-label="Monthly usage by service">
        {SERVICES.map((service) => {
          const figures = month.services[service];
          const { label, unit } = SERVICE_LABELS[service];
          const days = monthDays(
            month.period,
            usage.daily.filter((d) => d.service === service).map((d) => ({ day: d.day, value: d.used })),
          );
          return (
            <article
              class="usage-card"
              data-testid={`usage-${service}`}
              data-used={figures.used}
              data-limit={figures.limit ?? "unlimited"}
              aria-labelledby={`usage-${service}-name`}
            >
              <h3 id={`usage-${service}-name`}>{label}</h3>
              <p class="usage-figures">
                <strong>{formatNumber(figures.used)}</strong>
                {figures.limit === null ? ` ${unit}, unlimited` : ` of ${formatNumber(figures.limit)} ${unit} · ${percentOf(figures.used, figures.limit)} %`}
              </p>
              <UsageBar id={`usage-${service}-bar`} label={label} used={figures.used} limit={figures.limit} unit={unit} />
              <DailyChart id={`usage-${service}-daily`} caption={`${label} per day, ${monthName(month.period)}`} unit={unit} days={days} />
            </article>
          );
        })}
      </section>
    </>,
  );
});
