// The Worker's settings in one place: each var's default and how it is read (`settings(env)`), and
// the check of the secrets on the first request an isolate serves (`requireSecrets()`), so a
// missing or unusable secret answers one clear 500 naming it instead of failing deep inside a
// handler. docs/CONFIGURATION.md lists the same settings for people.
import type { MiddlewareHandler } from "hono";
import type { AppEnv, Env } from "../env";
import { fromBase64Url } from "./crypto";
import { ApiError } from "./errors";
import { log } from "./log";

/** Each var's value when wrangler.toml (or the environment) leaves it unset or empty. */
export const DEFAULTS = {
  APP_URL: "http://localhost:8787",
  RATE_LIMITS: "on",
  REQUEST_LOG: "on",
  ALLOW_PRIVATE_TARGETS: "false",
  MAIL_TRANSPORT: "outbox",
  MAIL_FROM: "Edge Platform <no-reply@edge-platform.dev>",
  SANDBOX_DOMAIN: "sandbox.edge-platform.dev",
  SANDBOX_HOURLY_CAP: "50",
  SANDBOX_DAILY_CAP: "200",
  DNS_RESOLVER_URL: "https://cloudflare-dns.com/dns-query",
  RELAY_FORWARDS_PER_MINUTE: "600",
} as const;

type Vars = { [K in keyof typeof DEFAULTS]?: string };

/** The settings as code uses them: parsed once per environment object. */
export interface Settings {
  /** APP_URL without its trailing slashes: the base of every public link. */
  appUrl: string;
  /** APP_URL's origin: the only origin of state-changing console requests; the API base of the console's examples. */
  appOrigin: string;
  /** APP_URL is https: cookies are Secure. */
  https: boolean;
  /** RATE_LIMITS is not `off`. */
  rateLimits: boolean;
  /** REQUEST_LOG is not `off`. */
  requestLog: boolean;
  /** ALLOW_PRIVATE_TARGETS is `true` (local dev and tests only). */
  allowPrivateTargets: boolean;
  /** `outbox` (local), `http` (MAIL_HTTP_URL) or anything else (`off`: every message fails, saying why). */
  mailTransport: string;
  mailFrom: string;
  /** Lower case. */
  sandboxDomain: string;
  /** The team's sandbox caps (SANDBOX_HOURLY_CAP, SANDBOX_DAILY_CAP): every sandbox key of a team counts in them together. */
  sandboxCaps: SandboxCaps;
  dnsResolverUrl: string;
  /** Deliveries one webhook relay source may create per minute at ingest (RELAY_FORWARDS_PER_MINUTE): past it the ingest answers 429. */
  relayForwardsPerMinute: number;
}

/** A team's sandbox caps: emails per UTC hour and per UTC day, all its sandbox keys together. */
export interface SandboxCaps {
  hourly: number;
  daily: number;
}

/** The team sandbox caps when SANDBOX_HOURLY_CAP / SANDBOX_DAILY_CAP are unset (or not a positive integer). */
export const DEFAULT_SANDBOX_CAPS: SandboxCaps = { hourly: Number(DEFAULTS.SANDBOX_HOURLY_CAP), daily: Number(DEFAULTS.SANDBOX_DAILY_CAP) };

function positiveInt(value: string, fallback: number): number {
  const n = Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}

const parsed = new WeakMap<object, Settings>();

/**
 * The settings of `env`, defaults applied (an empty var counts as unset). Parsed once per
 * environment object: the runtime hands an isolate the same one for every request.
 */
export function settings(env: Vars): Settings {
  let found = parsed.get(env);
  if (found) return found;
  const read = (name: keyof typeof DEFAULTS) => env[name] || DEFAULTS[name];
  const appUrl = read("APP_URL").replace(/\/+$/, "");
  found = {
    appUrl,
    appOrigin: new URL(appUrl).origin,
    https: appUrl.startsWith("https:"),
    rateLimits: read("RATE_LIMITS") !== "off",
    requestLog: read("REQUEST_LOG") !== "off",
    allowPrivateTargets: read("ALLOW_PRIVATE_TARGETS") === "true",
    mailTransport: read("MAIL_TRANSPORT"),
    mailFrom: read("MAIL_FROM"),
    sandboxDomain: read("SANDBOX_DOMAIN").toLowerCase(),
    sandboxCaps: {
      hourly: positiveInt(read("SANDBOX_HOURLY_CAP"), DEFAULT_SANDBOX_CAPS.hourly),
      daily: positiveInt(read("SANDBOX_DAILY_CAP"), DEFAULT_SANDBOX_CAPS.daily),
    },
    dnsResolverUrl: read("DNS_RESOLVER_URL"),
    relayForwardsPerMinute: positiveInt(read("RELAY_FORWARDS_PER_MINUTE"), Number(DEFAULTS.RELAY_FORWARDS_PER_MINUTE)),
  };
  parsed.set(env, found);
  return found;
}

type Secrets = Pick<Env, "ADMIN_TOKEN" | "ENCRYPTION_KEY" | "SIGNING_KEY">;

/** The shortest operator token accepted: a guessable one would open the operator API. */
export const ADMIN_TOKEN_MIN = 16;
/** The shortest HMAC key accepted for share tokens and download links. */
export const SIGNING_KEY_MIN = 32;

/**
 * What is wrong with the secrets, one sentence per secret, naming it and never showing its value;
 * empty when every secret is present and usable.
 */
export function secretProblems(env: Partial<Secrets>): string[] {
  const problems: string[] = [];
  if (!env.ADMIN_TOKEN) problems.push("ADMIN_TOKEN is not set");
  else if (env.ADMIN_TOKEN.length < ADMIN_TOKEN_MIN) problems.push(`ADMIN_TOKEN is shorter than ${ADMIN_TOKEN_MIN} characters`);
  if (!env.ENCRYPTION_KEY) problems.push("ENCRYPTION_KEY is not set");
  else if (!isKeyOf32Bytes(env.ENCRYPTION_KEY)) problems.push("ENCRYPTION_KEY is not base64 of 32 bytes");
  if (!env.SIGNING_KEY) problems.push("SIGNING_KEY is not set");
  else if (env.SIGNING_KEY.length < SIGNING_KEY_MIN) problems.push(`SIGNING_KEY is shorter than ${SIGNING_KEY_MIN} characters`);
  return problems;
}

function isKeyOf32Bytes(value: string): boolean {
  try {
    return fromBase64Url(value).byteLength === 32;
  } catch {
    return false;
  }
}

const checked = new WeakMap<object, string[]>();
/** The problems last logged: logged once per isolate, not once per request or environment object. */
let reported = "";

/**
 * Root middleware: checks the secrets on the first request an isolate serves with an environment
 * (then remembers the answer), and while one is missing or unusable answers every request 500
 * naming the setting; the problem is logged once per isolate.
 */
export function requireSecrets(): MiddlewareHandler<AppEnv> {
  return async function requireSecretsMiddleware(c, next) {
    let problems = checked.get(c.env);
    if (!problems) {
      problems = secretProblems(c.env);
      checked.set(c.env, problems);
      if (problems.length > 0 && problems.join("; ") !== reported) {
        reported = problems.join("; ");
        log.error("server misconfigured", { problems });
      }
    }
    if (problems.length > 0) throw new ApiError("internal", `Server misconfigured: ${problems.join("; ")} (see docs/CONFIGURATION.md)`);
    await next();
  };
}
