// The banner `npm start` prints once the server is up (scripts/start.mjs): every address a newcomer
// needs. TypeScript Node runs as is (type stripping) and without imports, so the pool tests
// (test/platform/local-dev.test.ts) render it against the app and follow each of its links.

export interface BannerInput {
  /** APP_URL's origin. */
  base: string;
  teamId: string;
  key: string;
  owner: string;
  signInLink: string;
  domain: string;
}

/**
 * The banner for the server at `base` (APP_URL's origin), the demo team and key, the demo owner,
 * their one-time sign-in link and the demo sending domain.
 */
export function startBanner({ base, teamId, key, owner, signInLink, domain }: BannerInput): string {
  return `
  Edge Platform is running at ${base}
  API root        ${base}/api/v1
  API reference   ${base}/api/v1/docs
  Demo team       ${teamId} (plan pro)
  Demo API key    ${key}
  Console         ${base}/console  (sign in as ${owner} with the link below)
  Sign-in link    ${signInLink}
                  (works once, for 15 minutes; later links print in this log when you
                   ask for one on ${base}/console/sign-in: the outbox transport sends nothing)
  Sending domain  ${domain} (verified for the demo team)
  Operator token  ADMIN_TOKEN from .dev.vars (or the environment)

  Try: curl -H "Authorization: Bearer ${key}" ${base}/api/v1/usage
`;
}

/** Every http(s) address in a banner, in order, without duplicates. */
export function bannerLinks(text: string): string[] {
  // A sentence's punctuation after an address is not part of it ("…/sign-in: the outbox").
  return [...new Set((text.match(/https?:\/\/[^\s)"]+/g) ?? []).map((url) => url.replace(/[:.,;]+$/, "")))];
}
