// How a product declares a scheduled job, and the schedules wrangler.toml triggers. A job names a
// schedule, not a cron expression, so a job cannot be given an expression nothing triggers; a test
// holds SCHEDULES against wrangler.toml's crons, and src/index.ts builds its dispatch table from
// the declarations (`cronTable`).
import { log, withLogScope } from "../log";
import type { Env } from "../../env";

/** The cron expressions of wrangler.toml's [triggers], by name. */
export const SCHEDULES = {
  everyMinute: "* * * * *",
  hourly: "0 * * * *",
} as const;

export type Schedule = keyof typeof SCHEDULES;

/** A scheduled job. Jobs must be safe to run twice (a run can overlap the previous one). */
export interface CronJob {
  /** Names the job in logs. */
  name: string;
  schedule: Schedule;
  /** What it returns (counts of work done) is for its tests and logs, not for the runner. Its clock is `nowMs()`. */
  run: (env: Env) => Promise<unknown>;
}

/** Declares a scheduled job (next to the function it runs, in the product's *.cron.ts). */
export function defineCron(job: CronJob): CronJob {
  return job;
}

/**
 * The dispatch table of `src/index.ts`: the jobs of each cron expression. Two jobs of one name
 * throw, as their failures could not be told apart in the logs.
 */
export function cronTable(jobs: readonly CronJob[]): Record<string, CronJob[]> {
  const names = new Set<string>();
  const table: Record<string, CronJob[]> = {};
  for (const job of jobs) {
    if (names.has(job.name)) throw new Error(`two cron jobs named ${job.name}`);
    names.add(job.name);
    (table[SCHEDULES[job.schedule]] ??= []).push(job);
  }
  return table;
}

/**
 * Runs the jobs of one cron expression, each even if another fails (a failure is logged with the
 * job's name). An expression with no jobs is logged: wrangler.toml triggers something this Worker
 * does not know, which would otherwise do nothing, silently.
 */
export async function runScheduled(table: Record<string, CronJob[]>, cron: string, env: Env): Promise<void> {
  const jobs = Object.hasOwn(table, cron) ? table[cron] : undefined;
  if (!jobs) {
    log.error("no cron jobs for this expression", { cron });
    return;
  }
  const results = await Promise.allSettled(jobs.map((job) => withLogScope({ cron, job: job.name }, () => job.run(env))));
  results.forEach((result, i) => {
    if (result.status === "rejected") log.error("cron job failed", { cron, job: jobs[i].name, error: String(result.reason) });
  });
}
