// The console shell's own page groups, each a Hono router mounted at /console/teams/:team_id
// behind the session and team-access middleware (console.routes.tsx); the products' groups follow
// them, from their definitions (`console.pages`). A product's pages live in its folder.
import type { Hono } from "hono";
import type { ConsoleEnv } from "../session";
import { keysPages } from "./keys";
import { membersPages } from "./members";
import { requestsPages } from "./requests";
import { usagePages } from "./usage";

export const PAGE_GROUPS: readonly Hono<ConsoleEnv>[] = [keysPages, membersPages, usagePages, requestsPages];
