// The Worker's bindings and vars, and the Hono context variables: one place for both.
import type { RateLimiter } from "./platform/rate-limit/durable-object";
import type { LogStore } from "./products/logs/store/log-store";
import type { Principal } from "./platform/auth";

export interface Env {
  DB: D1Database;
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  LOG_STORE: DurableObjectNamespace<LogStore>;
  REPORTS: R2Bucket;
  ASSETS?: Fetcher;
  EXPORT_QUEUE: Queue;
  WEBHOOK_QUEUE: Queue;
  PUSH_QUEUE: Queue;
  MAIL_QUEUE: Queue;
  ALERT_QUEUE: Queue;
  SURVEY_QUEUE: Queue;
  ALERT_CHECK_QUEUE: Queue;
  AI?: Ai;

  APP_URL: string;
  RATE_LIMITS?: string;
  ALLOW_PRIVATE_TARGETS?: string;
  MAIL_TRANSPORT?: string;
  MAIL_HTTP_URL?: string;
  MAIL_HTTP_TOKEN?: string;
  MAIL_FROM?: string;
  SANDBOX_DOMAIN?: string;
  /** DNS-over-HTTPS JSON API used to verify sending domains (default Cloudflare's public resolver). */
  DNS_RESOLVER_URL?: string;
  SURVEY_AI_PROVIDER?: string;

  ADMIN_TOKEN: string;
  ENCRYPTION_KEY: string;
  SIGNING_KEY: string;
  /** Set only while rotating keys: values sealed / tokens signed with the previous key stay readable. */
  ENCRYPTION_KEY_PREVIOUS?: string;
  SIGNING_KEY_PREVIOUS?: string;
}

export interface Variables {
  requestId: string;
  principal: Principal;
}

export type AppEnv = { Bindings: Env; Variables: Variables };
