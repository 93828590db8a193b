// The POSTs of a flag's page other than its targeting (flag-rule-actions.ts): the variants, the off
// variant, the settings, revert, scheduled changes and deletion. Each is a developer's write
// through the service the API calls (the same checks, versions and history, the console user as
// actor), made against the version the page showed (If-Match) through flag-write.ts: a change made
// meanwhile is refused at 412 and nothing is saved; a refusal re-renders the flag page at its
// status (412, 422) with the problem in words beside its form; a saved form redirects (303).
import { Hono } from "hono";
import { formList, formText } from "../../../console/forms";
import { redirectTo } from "../../../console/render";
import { requireRole, type ConsoleEnv } from "../../../console/session";
import { ApiError, type FieldErrors } from "../../../platform/errors";
import { deleteFlag, deleteScheduledChange, revertFlag, scheduleChange } from "../flags.service";
import type { ScheduledChangeInput } from "../store/flag-rows";
import { renderFlagPage } from "./flag-page";
import { detailsText, patch, postedServe, Refused, SERVE_FIELDS, write } from "./flag-write";
import { lines, userActor, variantValue } from "./flags-parts";

export const flagActions = new Hono<ConsoleEnv>();

const VARIANT_FIELDS = ["variant_original", "variant_name", "variant_value", "remove"] as const;

flagActions.post("/flags/:flag_key/variants", (c) =>
  write(
    c,
    "variants",
    "saved",
    async (flag, version) => {
      const originals = await formList(c, "variant_original");
      const values = await formList(c, "variant_value");
      const removed = new Set(await formList(c, "remove"));
      const variants: Record<string, unknown> = {};
      const errors: FieldErrors = {};
      (await formList(c, "variant_name")).forEach((typed, i) => {
        const original = originals[i] ?? "";
        const name = typed.trim();
        const text = values[i] ?? "";
        if ((original && removed.has(original)) || (!name && !text.trim())) return;
        const value = variantValue(flag.type, text);
        if (!name) (errors.variants ??= []).push(`the value ${text} has no variant name`);
        else if (Object.hasOwn(variants, name)) (errors[`variants.${name}`] ??= []).push("is named twice");
        else if (value === undefined) (errors[`variants.${name}`] ??= []).push(`must be a ${flag.type}${flag.type === "json" ? " (JSON text)" : ""}`);
        else variants[name] = value;
      });
      if (Object.keys(errors).length > 0) throw ApiError.validation(errors);
      try {
        await patch(c, flag, version, { variants });
      } catch (error) {
        // A variant still served (by a rule, a default rule or as the off variant) cannot go: the API's own words, and what to do.
        if (
          error instanceof ApiError &&
          error.code === "validation" &&
          Object.keys(error.details ?? {}).some((f) => f.startsWith("environments.") || f === "off_variant")
        )
          throw new Refused(
            "variants",
            `Nothing was saved: a variant you removed or renamed is still served (${detailsText(error)}). Point those rules, default rules or the off variant at another variant first.`,
          );
        throw error;
      }
    },
    VARIANT_FIELDS,
  ),
);

flagActions.post("/flags/:flag_key/off-variant", (c) =>
  write(c, "off-variant", "saved", async (flag, version) => {
    await patch(c, flag, version, { off_variant: await formText(c, "off_variant") });
  }),
);

flagActions.post("/flags/:flag_key/settings", (c) =>
  write(c, "settings", "saved", async (flag, version) => {
    const name = (await formText(c, "name")).trim();
    if (!name) throw new Refused("settings", "The name can't be blank. Nothing was saved.");
    await patch(c, flag, version, {
      name: name.slice(0, 200),
      description: (await formText(c, "description")).slice(0, 2000),
      tags: lines(await formText(c, "tags")),
      client_side: (await formText(c, "client_side")) === "on",
    });
  }),
);

flagActions.post("/flags/:flag_key/revert", (c) =>
  write(c, "revert", "reverted", async (flag, version) => {
    const to = Number(await formText(c, "to"));
    if (!Number.isInteger(to) || to < 1) throw new Refused("revert", "Choose a version of the history to revert to. Nothing was reverted.");
    await revertFlag(c.env, c.get("consoleTeam").id, flag.key, to, userActor(c), version);
  }),
);

flagActions.post("/flags/:flag_key/scheduled", (c) =>
  write(
    c,
    "schedule",
    "scheduled",
    async (flag, version) => {
      const local = await formText(c, "at");
      const at = Date.parse(`${local}${/T\d\d:\d\d$/.test(local) ? ":00" : ""}Z`);
      if (!Number.isFinite(at)) throw new Refused("schedule", "Give the date and time (UTC) of the change. Nothing was scheduled.");
      const input: ScheduledChangeInput = { environment: await formText(c, "environment"), at };
      const enabled = await formText(c, "enabled");
      if (enabled === "true" || enabled === "false") input.enabled = enabled === "true";
      if ((await formText(c, "serve")) !== "") input.fallthrough = await postedServe(c, "schedule");
      if (input.enabled === undefined && input.fallthrough === undefined)
        throw new Refused("schedule", "Choose what the change does: turn the environment on or off, change its default rule, or both. Nothing was scheduled.");
      await scheduleChange(c.env, c.get("consoleTeam").id, flag.key, input, userActor(c), version);
    },
    ["environment", "enabled", "at", ...SERVE_FIELDS],
  ),
);

flagActions.post("/flags/:flag_key/scheduled/:change_id/cancel", (c) =>
  write(
    c,
    "schedule",
    "cancelled",
    async (flag) => {
      await deleteScheduledChange(c.env, c.get("consoleTeam").id, flag.key, c.req.param("change_id")!);
    },
    [],
    false,
  ),
);

flagActions.post("/flags/:flag_key/delete", async (c) => {
  requireRole(c, "developer");
  const key = c.req.param("flag_key");
  if ((await formText(c, "confirm")) !== "yes")
    return renderFlagPage(c, key, { problem: { at: "settings", message: "Tick the box to confirm the deletion." }, status: 422 });
  await deleteFlag(c.env, c.get("consoleTeam").id, key);
  return redirectTo(c, "flags", "deleted");
});
