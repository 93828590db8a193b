// AnalyticsSaltStore: the daily salt of visitor hashes, one object for the platform (named
// SALT_OBJECT). It holds one salt, for one UTC day: asked for a later day, it draws a new salt and
// the old one is overwritten (deleted), so yesterday's hashes can never be made again and a visitor
// cannot be followed across days (Plausible's rule). Asked for an earlier day than the one it holds
// (an isolate whose clock lags at midnight), it answers the salt it holds: the old day's salt is
// never drawn again. Isolates cache the salt of the day (analytics.store.ts).
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../../env";

/** The one object of the namespace. */
export const SALT_OBJECT = "daily-salt";

interface Salt {
  day: string;
  salt: string;
}

export class AnalyticsSaltStore extends DurableObject<Env> {
  /** The salt of `day` (`YYYY-MM-DD`, UTC), drawn on the day's first call. */
  async saltFor(day: string): Promise<Salt> {
    const held = await this.ctx.storage.get<Salt>("salt");
    if (held && held.day >= day) return held;
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const fresh: Salt = { day, salt: [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("") };
    // One key: writing the new day's salt deletes the old one.
    await this.ctx.storage.put("salt", fresh);
    return fresh;
  }

  /** What the object holds (tests). */
  async held(): Promise<Salt | null> {
    return (await this.ctx.storage.get<Salt>("salt")) ?? null;
  }
}
