// The raw SQL of the push product's subscriber filters. Raw because Drizzle cannot say json_each:
// tags are a JSON array column, and targets carry their id or tag lists as one bound JSON array
// (one parameter however long the list, under D1's 100 bound parameters). (Not named `*.sql.ts`:
// wrangler's bundler takes an import ending in `.sql` for a text module.)
import { sql, type SQL } from "drizzle-orm";
import { pushSubscribers, type PushTarget } from "../../db/schema";

/** The subscriber carries this tag. */
export const hasTag = (tag: string): SQL => sql`EXISTS (SELECT 1 FROM json_each(${pushSubscribers.tags}) WHERE json_each.value = ${tag})`;

/** The subscribers a target selects (always scoped to the app by the caller). */
export function targetFilter(target: PushTarget): SQL | undefined {
  if (target.type === "subscribers") {
    return sql`${pushSubscribers.id} IN (SELECT value FROM json_each(${JSON.stringify(target.subscriber_ids)}))`;
  }
  if (target.type === "tags") {
    return sql`EXISTS (SELECT 1 FROM json_each(${pushSubscribers.tags}) WHERE json_each.value IN (SELECT value FROM json_each(${JSON.stringify(target.tags)})))`;
  }
  return undefined;
}
