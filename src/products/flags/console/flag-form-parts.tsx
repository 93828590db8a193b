/** @jsxImportSource hono/jsx */
// What every form of a flag's page shares: the version it is made against (If-Match), and a
// refused form's problem in words beside it, with what was posted when it was refused at 422
// (flag-write.ts keeps the fields each form names), so the form shows the typed values again.
import type { Flag } from "../flag-model";

/** What a refused form posted, by field. */
export type FormValues = Record<string, string[]>;

/** A refused form's message, placed beside the form it belongs to (`at` is that form's id), and what it posted. */
export interface Problem {
  at: string;
  message: string;
  values?: FormValues;
}

export function ProblemNote(props: { problem?: Problem | null; at: string }) {
  if (props.problem?.at !== props.at) return null;
  return (
    <p class="errors" role="alert" data-testid="form-problem">
      {props.problem.message}
    </p>
  );
}

/** The problem's posted values when it belongs to form `at`. */
export const keptFor = (problem: Problem | null | undefined, at: string): FormValues | null => (problem?.at === at ? (problem.values ?? null) : null);

/** The version a form is made against (If-Match). */
export const VersionField = (props: { flag: Flag }) => <input type="hidden" name="version" value={String(props.flag.version)} />;
