// One Drizzle client per D1 binding, built once per isolate rather than once per request.
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = DrizzleD1Database<typeof schema>;

const clients = new WeakMap<D1Database, Db>();

/** The Drizzle client for a D1 binding. */
export function getDb(d1: D1Database): Db {
  let db = clients.get(d1);
  if (!db) {
    db = drizzle(d1, { schema });
    clients.set(d1, db);
  }
  return db;
}
