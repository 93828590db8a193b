// SQL of the relay's D1 reads that Drizzle's builder does not express: a source's destination
// count as a column. The events, deliveries and attempts are in each source's store (store/).
import { sql } from "drizzle-orm";

/** A source's destination count, as a column of a Drizzle select of webhook_sources. */
// Written out in full: drizzle renders a bare column name inside sql``, which the subquery would capture.
export const destinationsCountSql = sql<number>`(SELECT COUNT(*) FROM webhook_destinations d WHERE d.source_id = "webhook_sources"."id")`;
