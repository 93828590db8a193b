// Retention of the console's tables, in the hourly job's bounded steps (platform/retention.ts):
// sessions past their idle or absolute expiry, one-time links used or expired, and console
// actions older than CONSOLE_ACTIONS_RETENTION_DAYS.
import type { Env } from "../env";
import { nowMs } from "../platform/clock";
import { defineCron } from "../platform/jobs/cron";
import { cutoffIso, deleteInSteps } from "../platform/retention";
import { SESSION_IDLE_MS } from "./sign-in.service";

/** Days the record of console actions is kept. */
export const CONSOLE_ACTIONS_RETENTION_DAYS = 90;

export async function consoleRetention(env: Env): Promise<{ sessions: number; links: number; actions: number }> {
  const at = nowMs();
  const now = new Date(at).toISOString();
  const [sessions, links, actions] = await Promise.all([
    deleteInSteps(env.DB, "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at <= ? OR last_used_at <= ? LIMIT ?)", [
      now,
      new Date(at - SESSION_IDLE_MS).toISOString(),
    ]),
    deleteInSteps(env.DB, "DELETE FROM console_links WHERE id IN (SELECT id FROM console_links WHERE used_at IS NOT NULL OR expires_at <= ? LIMIT ?)", [now]),
    deleteInSteps(env.DB, "DELETE FROM console_actions WHERE id IN (SELECT id FROM console_actions WHERE created_at < ? LIMIT ?)", [
      cutoffIso(at, CONSOLE_ACTIONS_RETENTION_DAYS),
    ]),
  ]);
  return { sessions, links, actions };
}

export const consoleRetentionCron = defineCron({ name: "console retention", schedule: "hourly", run: consoleRetention });
