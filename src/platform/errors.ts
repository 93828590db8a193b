// One error type for the whole platform and how it renders. Each product's router carries a
// formatter (src/platform/router.ts) so its 404s, validation errors and policy errors come out in
// its own documented body shape; auth (401/403) and rate-limit (429) bodies are the same
// everywhere, as the specification's Authentication and Limits sections require.
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ZodError } from "zod";

export type FieldErrors = Record<string, string[]>;

/**
 * The mail policy codes of the specification with their HTTP status (the mail product's policy
 * refusals, `{error, code}`; src/products/mail/mail.policy.ts).
 */
export const MAIL_POLICY_STATUS = {
  override_forbidden: 403,
  forbidden_header: 422,
  invalid_stream: 422,
  stream_required: 422,
  stream_not_allowed: 403,
  sandbox_disabled: 403,
  sandbox_domain_forbidden: 403,
  sandbox_stream_forbidden: 403,
  sandbox_extra_recipients: 422,
  recipient_not_allowed: 422,
  hourly_cap_exceeded: 429,
  daily_cap_exceeded: 429,
  /** docs/ARCHITECTURE.md "Sending domains": a live key sends only from a domain verified for its team. */
  domain_not_verified: 403,
} as const satisfies Record<string, ContentfulStatusCode>;

/**
 * Every error code of the platform with its HTTP status: the closed set an ApiError takes. A new
 * code is added here, with its status, or it does not compile.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation: 422,
  rate_limited: 429,
  monthly_quota: 429,
  internal: 500,
  bad_gateway: 502,
  unavailable: 503,
  // Audit.
  invalid_channel: 422,
  request_failed: 422,
  report_not_ready: 409,
  // Logs.
  daily_limit: 429,
  tail_limit: 429,
  // Webhook relay.
  source_disabled: 410,
  // Surveys (the public response flow).
  survey_closed: 409,
  response_completed: 409,
  path_finished: 409,
  unexpected_question: 409,
  unanswered_questions: 409,
  nothing_to_go_back_to: 409,
  not_on_path: 409,
  ...MAIL_POLICY_STATUS,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The platform's single error type: an HTTP status, a machine code, a message and optional details. */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: ErrorCode;
  readonly details?: FieldErrors;
  /** Extra top-level fields some shapes carry (retry_after, ...). */
  readonly extra?: Record<string, unknown>;
  /** Extra response headers (retry-after, ...). */
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      details?: FieldErrors;
      extra?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details;
    this.extra = options.extra;
    this.headers = options.headers;
  }

  static badRequest(message: string): ApiError {
    return new ApiError("bad_request", message);
  }
  static unauthorized(message = "Invalid or missing API key"): ApiError {
    return new ApiError("unauthorized", message);
  }
  static forbidden(message = "Insufficient scope"): ApiError {
    return new ApiError("forbidden", message);
  }
  static notFound(message = "Not found"): ApiError {
    return new ApiError("not_found", message);
  }
  /** 422 with per-field messages, e.g. `{ slug: ["has already been taken"] }`. */
  static validation(details: FieldErrors, message = "Validation failed"): ApiError {
    return new ApiError("validation", message, { details });
  }
  static monthlyQuota(): ApiError {
    return new ApiError("monthly_quota", "Monthly usage limit exceeded. Upgrade your plan.");
  }
  static rateLimited(retryAfter: number): ApiError {
    return new ApiError("rate_limited", "Rate limit exceeded", {
      extra: { retry_after: retryAfter },
      headers: { "retry-after": String(retryAfter) },
    });
  }
}

/** The one wording of a body that is not JSON, in every shape that has a message (mail, platform, logs). */
export const MALFORMED_JSON = "Malformed JSON in request body";

/** The 415 of a JSON route sent another content type: it says what to send. */
export const UNSUPPORTED_MEDIA_TYPE = "Unsupported Media Type: send the body as JSON with Content-Type: application/json";

/**
 * Turns a zod failure into field messages keyed by dotted path (`to`, `emails.0.from`, `_body`).
 * The messages are zod-messages.ts's; an unknown field is named as its own key
 * (`{retention: ["is not a known field"]}`), never folded into its parent.
 */
export function zodDetails(error: ZodError): FieldErrors {
  const details: FieldErrors = {};
  const add = (path: readonly PropertyKey[], message: string) => {
    const key = path.length ? path.map(String).join(".") : "_body";
    // An own property even for a caller's `__proto__` key (plain assignment would set the prototype).
    if (!Object.hasOwn(details, key)) Object.defineProperty(details, key, { value: [], enumerable: true, writable: true, configurable: true });
    details[key].push(message);
  };
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") for (const key of issue.keys) add([...issue.path, key], issue.message);
    else add(issue.path, issue.message);
  }
  return details;
}

export type ErrorFormatter = (error: ApiError, requestId: string) => unknown;

/** The default body: `{error}` plus `details` on validation failures (the spec's Validation shape). */
export const defaultFormatter: ErrorFormatter = (error) =>
  error.details ? { error: error.message, details: error.details } : { error: error.message, ...error.extra };

/** Codes whose body is fixed by the specification for every product. */
const UNIVERSAL = new Set(["unauthorized", "forbidden", "rate_limited"]);

/** Renders an error: the universal shapes first, then the product's formatter, else the default. */
export function renderError(error: ApiError, format: ErrorFormatter | undefined, requestId: string): unknown {
  if (UNIVERSAL.has(error.code)) return { error: error.message, ...error.extra };
  return (format ?? defaultFormatter)(error, requestId);
}
