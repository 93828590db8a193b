// Track events (server `POST /flags/track` and client `POST /flags/client/track`): exposures count
// in their flag's insights, custom events per name and hour. Only exposures of a flag the caller
// can see, with one of its variants, are counted: a browser's events are untrusted input and can
// never add rows for flags that do not exist. A client's track never marks a flag fresh.
import { z } from "@hono/zod-openapi";
import type { Env } from "../../env";
import { nowMs } from "../../platform/clock";
import type { PreparedRuleset, RulesetFlag } from "./evaluate";
import { LIMITS } from "./flags.schemas";
import { noteCustomEvent, noteInsights } from "./flags.insights";

export const TrackEventSchema = z
  .strictObject({
    kind: z.enum(["exposure", "custom"]),
    flag: z.string().max(64).optional(),
    variant: z.string().max(64).optional(),
    name: z.string().min(1).max(200).optional(),
    context_key: z.string().min(1).max(256),
    value: z.number().finite().optional(),
    at: z.iso.datetime({ offset: true }).optional(),
  })
  .superRefine((e, ctx) => {
    if (e.kind === "exposure" && (e.flag === undefined || e.variant === undefined))
      ctx.addIssue({ code: "custom", message: "an exposure names its `flag` and `variant`", path: ["flag"] });
    if (e.kind === "custom" && e.name === undefined) ctx.addIssue({ code: "custom", message: "a custom event has a `name`", path: ["name"] });
  })
  .openapi("FlagTrackEvent");

export const TrackEvents = z
  .array(TrackEventSchema)
  .min(1, "must have at least one event")
  .max(LIMITS.trackEvents, `has more than ${LIMITS.trackEvents} events`);

export type TrackEvent = z.infer<typeof TrackEventSchema>;

/** Counts the events; returns how many were counted (unknown flags and variants are dropped). */
export function recordTrack(
  env: Env,
  teamId: string,
  prepared: PreparedRuleset,
  events: TrackEvent[],
  options: { visible: (flag: RulesetFlag) => boolean; fresh: boolean; keepAlive?: (p: Promise<unknown>) => void },
): number {
  const environment = prepared.ruleset.environment;
  const exposures: Array<{ flag: string; variant: string }> = [];
  let counted = 0;
  for (const e of events) {
    if (e.kind === "exposure") {
      const flag = prepared.flags.get(e.flag!)?.flag;
      if (!flag || !options.visible(flag) || !Object.hasOwn(flag.variants, e.variant!)) continue;
      exposures.push({ flag: flag.key, variant: e.variant! });
    } else {
      const at = e.at ? Date.parse(e.at) : nowMs();
      noteCustomEvent(env, teamId, environment, e.name!, e.value ?? 0, Math.min(at, nowMs()), options.keepAlive);
    }
    counted++;
  }
  if (exposures.length > 0) noteInsights(env, teamId, environment, exposures, "exposure", options.fresh, options.keepAlive);
  return counted;
}
