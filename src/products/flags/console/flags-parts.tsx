/** @jsxImportSource hono/jsx */
// What the flags pages share: who the console user is in a flag's history, whether the viewer may
// write (and the line a viewer reads instead of a form), the error list of a refused form, and the
// tabs between the flags, segments and settings pages.
import type { Context } from "hono";
import type { FieldErrors } from "../../../platform/errors";
import { teamPath } from "../../../console/render";
import { roleAtLeast, type ConsoleEnv } from "../../../console/session";
import type { FlagType } from "../evaluate";
import type { Flag } from "../flag-model";
import type { Actor } from "../flags.schemas";

/** The console user as a flag's history names them (the same history the API's key changes write). */
export function userActor(c: Context<ConsoleEnv>): Actor {
  const user = c.get("consoleUser");
  return { type: "user", id: user.userId, label: user.email };
}

export const canWrite = (c: Context<ConsoleEnv>) => roleAtLeast(c.get("consoleTeam").role, "developer");

/** Where a viewer would see a form. */
export function ReadOnly(props: { what: string }) {
  return <p class="muted small">A developer, admin or owner of the team can {props.what}; your role can read this page.</p>;
}

/** The messages of a refused form, by field (a message of its own under `form`). */
export function Errors(props: { errors?: FieldErrors | null; testid?: string }) {
  if (!props.errors || Object.keys(props.errors).length === 0) return null;
  return (
    <ul class="errors" role="alert" data-testid={props.testid ?? "form-errors"}>
      {Object.entries(props.errors).map(([field, messages]) => (
        <li>{field === "form" ? messages.join(" ") : `${field.replace(/_/g, " ")}: ${messages.join(", ")}`}</li>
      ))}
    </ul>
  );
}

/** The flags product's pages, as tabs. */
export function FlagTabs(props: { c: Context<ConsoleEnv>; current: "flags" | "segments" | "environments" }) {
  const tabs = [
    ["flags", "Flags"],
    ["segments", "Segments"],
    ["environments", "Environments"],
  ] as const;
  return (
    <nav class="tabs filters" aria-label="Feature flags">
      {tabs.map(([id, label]) => (
        <a class="filter" href={teamPath(props.c, id === "flags" ? "flags" : `flags/${id}`)} aria-current={props.current === id ? "page" : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

/** A variant value as typed in a form, read as the flag's type; undefined when it is not one. */
export function variantValue(type: FlagType, text: string): unknown {
  if (type === "string") return text;
  if (type === "number") return text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : undefined;
  if (type === "boolean") return text.trim() === "true" ? true : text.trim() === "false" ? false : undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A variant value as a form shows it (the text variantValue reads back). */
export const variantText = (type: FlagType, value: unknown): string => (type === "string" && typeof value === "string" ? value : JSON.stringify(value));

/** Lines of a textarea (one value a line, commas also split), trimmed, without blanks. */
export function lines(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export const TOGGLE_NOTICES = {
  "turned-on": "Turned on. The change is a new version in the flag's history.",
  "turned-off": "Turned off: the environment serves the off variant. The change is a new version in the flag's history.",
  unchanged: "Nothing to change: the environment was already in that state.",
};

/** One switch of a flag in an environment: a POST form that sets the state it names (so a second post changes nothing). */
export function ToggleForm(props: { c: Context<ConsoleEnv>; flag: Flag; environment: string; back: "list" | "flag" }) {
  const on = props.flag.environments[props.environment]?.enabled ?? false;
  const action = teamPath(props.c, `flags/${props.flag.key}/environments/${props.environment}/toggle`);
  return (
    <form method="post" action={action} class="inline-form" data-testid="toggle-flag" data-environment={props.environment} data-state={on ? "on" : "off"}>
      <input type="hidden" name="enabled" value={on ? "false" : "true"} />
      <input type="hidden" name="back" value={props.back} />
      <button
        type="submit"
        class={on ? "small" : "secondary small"}
        role="switch"
        aria-checked={on ? "true" : "false"}
        aria-label={`${props.flag.key} in ${props.environment}: ${on ? "on. Turn off" : "off. Turn on"}`}
      >
        {on ? "On" : "Off"}
      </button>
    </form>
  );
}
