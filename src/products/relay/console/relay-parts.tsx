/** @jsxImportSource hono/jsx */
// Pieces the relay's console pages share (the sources and a source in relay.tsx, an event in
// relay-event.tsx): the delivery status badge, a form's field errors, and what a viewer sees of a
// stored header.
import type { FieldErrors } from "../../../platform/errors";

/** Header names whose values are credentials of the sender: masked for viewers (they never see a secret). */
const SECRET_HEADER =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key)$|token|secret|signature|password|passwd|api[-_]?key|session|credential|(^|-)sig(-|$)|(^|-)auth(-|$)/i;

/** A stored header as a viewer sees it: a secret-like header's value masked, the others as received. */
export function maskedHeader(name: string, value: string): string {
  return SECRET_HEADER.test(name) ? "•••••• (hidden from viewers)" : value;
}

/** Characters of an attempt's answer shown in its row (the whole stored excerpt is 1 KB). */
export const ANSWER_EXCERPT = 160;

const STATUS_LABELS: Record<string, string> = { delivered: "delivered", failed: "failed", pending: "pending", sending: "sending", none: "no destination" };

export function StatusBadge(props: { status: string }) {
  const tone = props.status === "delivered" ? "ok" : props.status === "failed" ? "danger" : props.status === "none" ? "gray" : "warn";
  return <span class={`badge ${tone}`}>{STATUS_LABELS[props.status] ?? props.status}</span>;
}

export function Errors(props: { errors?: FieldErrors }) {
  if (!props.errors) return null;
  return (
    <ul class="errors">
      {Object.entries(props.errors).map(([field, messages]) => (
        <li>
          {field.replace(/_/g, " ")}: {messages.join(", ")}
        </li>
      ))}
    </ul>
  );
}
