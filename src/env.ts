// The Worker's bindings and vars, and the Hono context variables: one place for both.
import type { Principal } from "./platform/auth";
import type { ExportMessage } from "./products/audit/audit.messages";
import type { ScanMessage } from "./products/audit/audit-scan.messages";
import type { AlertCheck, AlertNotification } from "./products/logs/logs.messages";
import type { MailQueueMessage } from "./products/mail/mail.messages";
import type { PushQueueMessage } from "./products/push/push.messages";
import type { DeliveryMessage } from "./products/relay/relay.messages";
import type { SurveyWebhookMessage } from "./products/surveys/surveys.messages";

/**
 * The Worker's environment: the bindings and vars exactly as wrangler.toml declares them
 * (`WranglerEnv`, generated into src/worker-configuration.d.ts by `npm run types`; CI fails when it
 * is stale), plus what wrangler.toml does not hold: secrets, and bindings that are optional.
 */
export interface Env extends WranglerEnv {
  // Each queue with the message its consumer reads, inferred from the zod schema the consumer
  // parses with (`defineConsumer` checks the schema against these), so a producer sending anything
  // else fails the type-check (wrangler's generated types know only `Queue`). The schemas live in
  // each product's leaf `*.messages.ts`, so this file imports no product code.
  EXPORT_QUEUE: Queue<ExportMessage>;
  SCAN_QUEUE: Queue<ScanMessage>;
  WEBHOOK_QUEUE: Queue<DeliveryMessage>;
  PUSH_QUEUE: Queue<PushQueueMessage>;
  MAIL_QUEUE: Queue<MailQueueMessage>;
  ALERT_QUEUE: Queue<AlertNotification>;
  ALERT_CHECK_QUEUE: Queue<AlertCheck>;
  SURVEY_QUEUE: Queue<SurveyWebhookMessage>;

  AI?: Ai;
  MAIL_HTTP_TOKEN?: string;
  /** `workers-ai` to ask Workers AI for survey questions (default: the built-in generator). */
  SURVEY_AI_PROVIDER?: string;

  /** `off`: requests are not written to the request log nor to their key's last use (the bench's twin of a route). */
  REQUEST_LOG?: string;

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
