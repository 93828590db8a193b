// The one-time move of email bodies from D1 rows (`html` and `text` of rows stored before the
// bodies went to R2, `body_in_r2` false) into the MAIL_BODIES bucket. The operator runs it in steps
// (POST /api/v1/admin/mail/migrate-bodies) until `more` is false. Each step reads the oldest such
// rows, writes each body as its object, then empties the rows' columns and marks them moved, in one
// statement for the step. A step that stops between the writes and the update repeats nothing
// harmful: the next step writes the same objects again (a put replaces) and then marks the rows.
import type { Env } from "../../env";
import { ApiError } from "../../platform/errors";
import { putBodies } from "./mail.bodies";
import { markBodiesMoved, rowsWithBodyInD1 } from "./mail.queries";

/** Rows per step: a body may be 2 × 256 K characters, so a step's rows stay far inside a Worker's 128 MB. */
export const MIGRATE_BODIES_MAX_ROWS = 25;

/** One step: moves the bodies of up to `limit` of the oldest rows that still hold theirs. */
export async function migrateBodies(env: Env, limit: number): Promise<{ moved: number; more: boolean }> {
  const rows = await rowsWithBodyInD1(env.DB, limit);
  if (rows.length === 0) return { moved: 0, more: false };
  try {
    await putBodies(
      env,
      rows.map((row) => ({ id: row.id, teamId: row.team_id, html: row.html, text: row.text })),
    );
  } catch (error) {
    // putBodies answers 500 for a send; here R2 is unavailable for a while: say so and keep the rows as they were.
    throw error instanceof ApiError ? new ApiError("unavailable", "The mail body bucket did not answer; nothing was moved, run the step again") : error;
  }
  const moved = await markBodiesMoved(
    env.DB,
    rows.map((row) => row.id),
  );
  return { moved, more: rows.length === limit };
}
