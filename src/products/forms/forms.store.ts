// The Worker's side of the per-form store (store/form-store.ts): the stub of a form's object, the
// owner record it is given, and a post's write coalesced per isolate and form into one line
// (platform/coalesce.ts): concurrent posts to one form share one call, each answered as if alone.
// The form passed in is always a row loaded for the caller's team or for a public post: another
// team's ids never reach or create a store.
import type { Env } from "../../env";
import { Coalescer, type KeepAlive } from "../../platform/coalesce";
import { namedObject } from "../../platform/durable-objects";
import type { FormRow } from "../../db/schema/forms";
import type { FormStore, StoreOwner, StoredSubmission } from "./store/form-store";

/** The store of one form: one object per form id. */
export function formStore(env: Env, formId: string): DurableObjectStub<FormStore> {
  return namedObject(env.FORM_STORE, formId);
}

export const ownerOf = (form: Pick<FormRow, "id" | "teamId" | "retentionDays">): StoreOwner => ({
  formId: form.id,
  teamId: form.teamId,
  retentionDays: form.retentionDays,
});

interface Post {
  owner: StoreOwner;
  submission: StoredSubmission;
  webhook: boolean;
}

const linesOf = new WeakMap<object, Coalescer<Post, true | { error: string }>>();

function lines(env: Env): Coalescer<Post, true | { error: string }> {
  let found = linesOf.get(env.FORM_STORE);
  if (!found) {
    const namespace = env.FORM_STORE;
    found = new Coalescer(
      async (formId, posts) =>
        namedObject(namespace, formId).addMany(
          posts[posts.length - 1]!.owner,
          posts.map(({ submission, webhook }) => ({ submission, webhook })),
        ),
      // A post carries its fields (up to 1 MB of text); its files went to R2 before.
      { weigh: (post) => post.submission.fields.length },
    );
    linesOf.set(env.FORM_STORE, found);
  }
  return found;
}

/** Stores a post (FormStore.addMany) in a call shared with the form's concurrent posts; throws when its own write failed. */
export async function addSubmission(env: Env, owner: StoreOwner, submission: StoredSubmission, webhook: boolean, keepAlive?: KeepAlive): Promise<void> {
  const outcome = await lines(env).run(owner.formId, { owner, submission, webhook }, keepAlive);
  if (outcome !== true) throw new Error(outcome.error);
}
