// Retention of the console's tables, in the hourly job's bounded steps (platform/retention.ts):
// sessions past their idle or absolute expiry, one-time links used or expired, flashes nobody read
// in time, and console actions older than CONSOLE_ACTIONS_RETENTION_DAYS.
import type { Env } from "../env";
import { nowMs } from "../platform/clock";
import { defineCron } from "../platform/jobs/cron";
import { cutoffIso, deleteInSteps } from "../platform/retention";
import { DELETE_ENDED_SESSIONS, DELETE_EXPIRED_FLASHES, DELETE_OLD_ACTIONS, DELETE_SPENT_LINKS } from "./console.queries";
import { SESSION_IDLE_MS } from "./sign-in.service";

/** Days the record of console actions is kept. */
export const CONSOLE_ACTIONS_RETENTION_DAYS = 90;

export async function consoleRetention(env: Env): Promise<{ sessions: number; links: number; actions: number; flashes: number }> {
  const at = nowMs();
  const now = new Date(at).toISOString();
  const [sessions, links, actions, flashes] = await Promise.all([
    deleteInSteps(env.DB, DELETE_ENDED_SESSIONS, [now, new Date(at - SESSION_IDLE_MS).toISOString()]),
    deleteInSteps(env.DB, DELETE_SPENT_LINKS, [now]),
    deleteInSteps(env.DB, DELETE_OLD_ACTIONS, [cutoffIso(at, CONSOLE_ACTIONS_RETENTION_DAYS)]),
    deleteInSteps(env.DB, DELETE_EXPIRED_FLASHES, [now]),
  ]);
  return { sessions, links, actions, flashes };
}

export const consoleRetentionCron = defineCron({ name: "console retention", schedule: "hourly", run: consoleRetention });
