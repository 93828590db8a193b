// The page groups of the console, each a Hono router mounted at /console/teams/:team_id behind the
// session and team-access middleware (console.routes.tsx). A new group is one file in this folder,
// one line here and one entry in ../nav.ts; it never edits another group's lines.
import type { Hono } from "hono";
import type { ConsoleEnv } from "../session";
import { auditPages } from "./audit";
import { keysPages } from "./keys";
import { logsPages } from "./logs";
import { relayPages } from "./relay";
import { membersPages } from "./members";
import { requestsPages } from "./requests";
import { usagePages } from "./usage";
import { mailPages } from "./mail";
import { pushPages } from "./push";
import { surveysPages } from "./surveys";
import { analyticsPages } from "../../products/analytics";

export const PAGE_GROUPS: readonly Hono<ConsoleEnv>[] = [
  keysPages,
  membersPages,
  usagePages,
  requestsPages,
  logsPages,
  relayPages,
  surveysPages,
  mailPages,
  pushPages,
  auditPages,
  analyticsPages,
];
