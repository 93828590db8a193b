// The scopes of the specification (Authentication 2), the platform's extension scopes, and what
// each implies.

/** The specification's scopes: what the demo key and every default key hold at most. */
export const SCOPES = [
  "surveys:read",
  "surveys:write",
  "audit:read",
  "audit:write",
  "logs:read",
  "logs:write",
  "push:read",
  "push:write",
  "webhooks:read",
  "webhooks:write",
  "mail:send",
  "mail:read",
  "billing:read",
  // NAMED-PRODUCTS.md: the named products' scopes, each `:write` including its `:read`.
  "flags:read",
  "flags:write",
] as const;

/**
 * Extension scopes (docs/ARCHITECTURE.md "Keys over the API"): managing a team's keys with a key. Never in
 * the demo key or any default key; a key or a person chooses them explicitly.
 */
export const EXTENSION_SCOPES = ["keys:read", "keys:write"] as const;

/** Every scope a key may hold. */
export const KEY_SCOPES = [...SCOPES, ...EXTENSION_SCOPES] as const;

export type Scope = (typeof KEY_SCOPES)[number];

/** Scopes granted implicitly by another scope: `webhooks:write` includes `webhooks:read`. */
const IMPLIED: Partial<Record<Scope, Scope[]>> = {
  "webhooks:write": ["webhooks:read"],
  "keys:write": ["keys:read"],
  "flags:write": ["flags:read"],
};

/** True when a key holding `held` may use an endpoint that requires `required`. */
export function hasScope(held: readonly string[], required: Scope): boolean {
  if (held.includes(required)) return true;
  return held.some((scope) => IMPLIED[scope as Scope]?.includes(required) ?? false);
}
