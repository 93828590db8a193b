/** @jsxImportSource hono/jsx */
// The fields that choose what a rule, the default rule or a scheduled change serves: one variant,
// or a percentage rollout with the attribute it buckets by and a share per variant (typed as
// percentages, flag-words.ts `parseShares`). One component for every such form, so a rule's
// rollout is edited exactly as the default rule's; flag-write.ts `postedServe` reads them back.
// After a refusal (422) the fields show what was posted (`kept`), not the stored serve.
import type { Serve } from "../evaluate";
import type { Flag } from "../flag-model";
import type { FormValues } from "./flag-form-parts";

const percentOf = (weight: number) => String(Number(((weight / 100_000) * 100).toFixed(3)));

/** Share inputs, one per variant, prefilled from a rollout (or 100% of a fixed variant; none when `serve` is null). */
export function Shares(props: { flag: Flag; id: string; serve: Serve | null; kept?: string[] }) {
  const weights = new Map<string, number>();
  if (props.serve && "rollout" in props.serve) for (const v of props.serve.rollout.variations) weights.set(v.variant, v.weight);
  else if (props.serve) weights.set(props.serve.variant, 100_000);
  return (
    <div class="inline-form">
      {Object.keys(props.flag.variants).map((variant, i) => (
        <div class="field narrow">
          <input type="hidden" name="variant" value={variant} />
          <label for={`${props.id}-share-${i}`}>{variant} share (%)</label>
          <input
            type="text"
            id={`${props.id}-share-${i}`}
            name="percent"
            inputmode="decimal"
            size={7}
            value={props.kept?.[i] ?? percentOf(weights.get(variant) ?? 0)}
          />
        </div>
      ))}
    </div>
  );
}

/**
 * The choice of a serve: a select (`serve`: `variant:<name>` or `rollout`), the rollout's `bucket_by`
 * and its shares. `leave` adds a first choice that changes nothing (a scheduled change's).
 */
export function ServeFields(props: { flag: Flag; id: string; label: string; serve: Serve | null; kept?: FormValues | null; leave?: string }) {
  const { flag, id, serve, kept } = props;
  const rollout = serve && "rollout" in serve ? serve.rollout : null;
  const chosen = kept?.serve?.[0] ?? (serve === null ? "" : "variant" in serve ? `variant:${serve.variant}` : "rollout");
  return (
    <>
      <div class="inline-form">
        <div class="field">
          <label for={`${id}-serve`}>{props.label}</label>
          <select id={`${id}-serve`} name="serve">
            {props.leave !== undefined ? (
              <option value="" selected={chosen === ""}>
                {props.leave}
              </option>
            ) : null}
            {Object.keys(flag.variants).map((v) => (
              <option value={`variant:${v}`} selected={chosen === `variant:${v}`}>
                variant {v}
              </option>
            ))}
            <option value="rollout" selected={chosen === "rollout"}>
              a percentage rollout (shares below)
            </option>
          </select>
        </div>
        <div class="field narrow">
          <label for={`${id}-bucket`}>Rollout buckets by</label>
          <input type="text" id={`${id}-bucket`} name="bucket_by" size={10} maxlength={256} value={kept?.bucket_by?.[0] ?? rollout?.bucket_by ?? "key"} />
        </div>
      </div>
      <Shares flag={flag} id={id} serve={serve} kept={kept?.percent} />
    </>
  );
}
