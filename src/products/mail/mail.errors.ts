// The mail product's error body, shared by every mail router (send, read, webhooks) and by the
// sending domains: policy refusals `{error, code}`, validation `{error, details}`, the webhook test's
// 502 `{error: {message, detail}}`, else `{error}`.
import type { ErrorFormatter } from "../../platform/errors";
import { isPolicyCode } from "./mail.policy";

export const mailErrorFormat: ErrorFormatter = (error) => {
  if (error.code === "bad_gateway") return { error: { message: error.message, detail: String(error.extra?.detail ?? "") } };
  if (isPolicyCode(error.code)) return { error: error.message, code: error.code };
  if (error.details) return { error: "Validation failed", details: error.details };
  return { error: error.message };
};
