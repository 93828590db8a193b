// The Worker's side of the per-form store (store/form-store.ts): the stub of a form's object and
// the owner record it is given. The form passed in is always a row loaded for the caller's team
// or for a public post: another team's ids never reach or create a store.
import type { Env } from "../../env";
import { namedObject } from "../../platform/durable-objects";
import type { FormRow } from "../../db/schema/forms";
import type { FormStore, StoreOwner } from "./store/form-store";

/** The store of one form: one object per form id. */
export function formStore(env: Env, formId: string): DurableObjectStub<FormStore> {
  return namedObject(env.FORM_STORE, formId);
}

export const ownerOf = (form: Pick<FormRow, "id" | "teamId" | "retentionDays">): StoreOwner => ({
  formId: form.id,
  teamId: form.teamId,
  retentionDays: form.retentionDays,
});
