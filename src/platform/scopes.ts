// The scopes a key may hold: the platform's own here, each product's in its definition (its
// folder's index.ts), and what each implies. Products add their scope names to the `Scope` type by
// augmenting `ProductScopes` beside their definition.
import { catalog } from "./products";

/**
 * Scope names products declare, as keys (values unused): `"logs:read": true`. Each product adds
 * its own with `declare module "../../platform/scopes" { interface ProductScopes { ... } }`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the products' module augmentations.
export interface ProductScopes {}

/** The platform's scope of the specification: reading the team's usage and plan. */
const PLATFORM_SCOPES = ["billing:read"] as const;

/**
 * Extension scopes (docs/ARCHITECTURE.md "Keys over the API"): managing a team's keys with a key. Never in
 * the demo key or any default key; a key or a person chooses them explicitly.
 */
export const EXTENSION_SCOPES = ["keys:read", "keys:write"] as const;

export type Scope = (typeof PLATFORM_SCOPES)[number] | (typeof EXTENSION_SCOPES)[number] | (keyof ProductScopes & string);

/** The platform's own implications: `keys:write` includes `keys:read`. */
const PLATFORM_IMPLIED: ReadonlyMap<Scope, readonly Scope[]> = new Map<Scope, readonly Scope[]>([["keys:write", ["keys:read"]]]);

/** The specification's scopes: what the demo key and every default key hold at most (the products', in list order, then `billing:read`). */
export function specScopes(): readonly Scope[] {
  return [...catalog().scopes, ...PLATFORM_SCOPES];
}

/** Every scope a key may hold. */
export function keyScopes(): readonly Scope[] {
  return [...specScopes(), ...EXTENSION_SCOPES];
}

/** `keyScopes()` as a zod enum's tuple. */
export function keyScopeTuple(): [Scope, ...Scope[]] {
  return keyScopes() as [Scope, ...Scope[]];
}

/** True when a key holding `held` may use an endpoint that requires `required`. */
export function hasScope(held: readonly string[], required: Scope): boolean {
  if (held.includes(required)) return true;
  const implied = catalog().implied;
  return held.some((scope) => (implied.get(scope as Scope) ?? PLATFORM_IMPLIED.get(scope as Scope))?.includes(required) ?? false);
}
