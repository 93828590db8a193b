// The scopes of the specification (Authentication 2) and what each implies.

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
] as const;

export type Scope = (typeof SCOPES)[number];

/** Scopes granted implicitly by another scope: `webhooks:write` includes `webhooks:read`. */
const IMPLIED: Partial<Record<Scope, Scope[]>> = {
  "webhooks:write": ["webhooks:read"],
};

/** True when a key holding `held` may use an endpoint that requires `required`. */
export function hasScope(held: readonly string[], required: Scope): boolean {
  if (held.includes(required)) return true;
  return held.some((scope) => IMPLIED[scope as Scope]?.includes(required) ?? false);
}
