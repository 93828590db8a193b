// Analytics control plane: the sites a team tracks (src/products/analytics/). Events never land in
// D1: they live in each site's store (src/products/analytics/store/).
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { teams } from "./platform";

export const analyticsSites = sqliteTable(
  "analytics_sites",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    /** The host the site's pages are served from (lower case, no `www.`); event URLs must be on it or under it. */
    domain: text("domain").notNull(),
    /** Keep the query string of a page's URL (default: the pathname only, as Plausible does). */
    keepQueryString: integer("keep_query_string", { mode: "boolean" }).notNull().default(false),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("analytics_sites_team_idx").on(t.teamId, t.createdAt)],
);
