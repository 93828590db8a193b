// Email bodies in R2 (the MAIL_BODIES bucket): one object per email, `emails/<team_id>/<email_id>.json`,
// holding `{html, text}`, written before the email's row and read back by GET /emails/:id, the list
// and the consumer when it sends. The row keeps what lists filter and sort on. Rows stored before
// the move keep their body in their own `html` and `text` columns (`body_in_r2` false) until the
// operator's migration (mail.migrate.ts) moves it. A send whose objects cannot all be written
// deletes those that were and answers 500 with nothing stored; retention deletes an email's
// object before its row (mail.cron.ts), so a failed delete leaves the row for the next run.
import { log } from "../../platform/log";
import type { Env } from "../../env";
import { ApiError } from "../../platform/errors";

export interface EmailBody {
  html: string | null;
  text: string | null;
}

/** What locates a body: the row's team and id, and whether the body is in R2 or still in the row. */
export interface BodyRef extends EmailBody {
  id: string;
  teamId: string;
  bodyInR2: boolean;
}

/** Objects written or read at once by one request (an invocation has 6 simultaneous connections). */
export const BODY_CONCURRENCY = 6;
/** Keys per R2 `delete` call (its limit). */
const DELETE_KEYS_PER_CALL = 1_000;

/** The object key of an email's body: under its team, so a team's bodies can be listed by prefix. */
export function bodyKey(teamId: string, id: string): string {
  return `emails/${teamId}/${id}.json`;
}

/** Runs `task` over the items, at most `limit` at a time; rejects with the first failure once all have settled. */
async function eachLimited<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      try {
        await task(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw (failure as { error: unknown }).error;
}

/**
 * Writes the bodies of emails about to be stored. When any write fails, the objects already
 * written are deleted and the send answers 500 (mail's specified statuses have no 503): nothing
 * is stored. A delete that fails too is logged with its keys: those objects have no row, so
 * nothing ever reads them.
 */
export async function putBodies(env: Env, refs: Array<Omit<BodyRef, "bodyInR2">>): Promise<void> {
  const written: string[] = [];
  try {
    await eachLimited(refs, BODY_CONCURRENCY, async (ref) => {
      const key = bodyKey(ref.teamId, ref.id);
      await env.MAIL_BODIES.put(key, JSON.stringify({ html: ref.html, text: ref.text } satisfies EmailBody), {
        httpMetadata: { contentType: "application/json" },
      });
      written.push(key);
    });
  } catch (error) {
    log.error("mail body write failed; nothing stored", { emails: refs.length, error: String(error) });
    await deleteBodyKeys(env, written);
    throw new ApiError("internal", "The email could not be stored; nothing was sent. Try again.");
  }
}

/** Deletes objects by key after a failed send; a failure is logged (orphans nothing reads), never thrown. */
export async function deleteBodyKeys(env: Env, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  try {
    await deleteBodies(env, keys);
  } catch (error) {
    log.error("mail body clean-up failed; objects without a row remain", { keys, error: String(error) });
  }
}

/** Deletes objects by key (R2 takes up to 1,000 keys a call); throws when R2 does. */
export async function deleteBodies(env: Env, keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += DELETE_KEYS_PER_CALL) await env.MAIL_BODIES.delete(keys.slice(i, i + DELETE_KEYS_PER_CALL));
}

/** The body of one email: from R2, or from its row when it was stored before the move. Throws when R2 fails or the object is missing. */
export async function readEmailBody(env: Env, ref: BodyRef): Promise<EmailBody> {
  if (!ref.bodyInR2) return { html: ref.html, text: ref.text };
  const object = await env.MAIL_BODIES.get(bodyKey(ref.teamId, ref.id));
  if (!object) throw new Error(`mail body missing from R2: ${bodyKey(ref.teamId, ref.id)}`);
  const body = await object.json<EmailBody>();
  return { html: body.html ?? null, text: body.text ?? null };
}

/** The rows with their bodies, read at most BODY_CONCURRENCY at a time (a page of a list: at most 100). */
export async function withBodies<Row extends BodyRef>(env: Env, rows: Row[]): Promise<Row[]> {
  const out = [...rows];
  const indexes = rows.map((_, i) => i);
  await eachLimited(indexes, BODY_CONCURRENCY, async (i) => {
    out[i] = { ...rows[i], ...(await readEmailBody(env, rows[i])) };
  });
  return out;
}
