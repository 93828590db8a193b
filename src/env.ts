// The Worker's bindings and vars, and the Hono context variables: one place for both.
import type { Principal } from "./platform/auth";

/**
 * The Worker's environment: the bindings and vars exactly as wrangler.toml declares them
 * (`WranglerEnv`, generated into src/worker-configuration.d.ts by `npm run types`; CI fails when it
 * is stale), plus what wrangler.toml does not hold: secrets, and bindings that are optional.
 */
export interface Env extends WranglerEnv {
  // Each queue's producer binding is typed with the message its consumer reads by the product
  // that declares the queue (module augmentation of Env in its `*.messages.ts`, beside the zod
  // schema the consumer parses with; `defineConsumer` checks the schema against it), so this file
  // imports no product code.

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
