// Feature flags' control-plane table: client keys (`fck_…`), looked up by hash from any team's
// request, so they live in D1 beside the team API keys. Flags, segments, environments and their
// history live in each team's flag store (products/flags/store).
import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { teams } from "./platform";

export const flagClientKeys = sqliteTable(
  "flag_client_keys",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    environment: text("environment").notNull(),
    name: text("name").notNull(),
    /** The key's first characters (`fck_` and 6 more), shown in lists. */
    prefix: text("prefix").notNull(),
    /** SHA-256 of the plaintext; the plaintext is shown once, at creation. */
    keyHash: text("key_hash").notNull().unique(),
    /** Origins a browser may call with the key (CORS); empty: any. */
    allowedOrigins: text("allowed_origins", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("flag_client_keys_team_idx").on(t.teamId, t.environment, t.createdAt)],
);
