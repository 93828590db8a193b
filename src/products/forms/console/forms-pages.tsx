/** @jsxImportSource hono/jsx */
// Placeholder replaced below.
import { Hono } from "hono";
import type { ConsoleEnv } from "../../../console/session";
import type { NavEntry } from "../../../console/nav";

export const formsPages = new Hono<ConsoleEnv>();
export const FORMS_NAV: NavEntry = { path: "forms", label: "Forms" };
