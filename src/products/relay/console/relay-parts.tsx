/** @jsxImportSource hono/jsx */
// Pieces the relay's console pages share (the sources in relay.tsx, a source in relay-source.tsx,
// settings in relay-settings.tsx, an event in relay-event.tsx): the senders' names, a
// destination's health, the delivery status badge, an event filter typed in a form, and what a
// viewer sees of a stored header.
import { Time } from "../../../console/layout";
import { StatusBadge } from "../../../console/pages/parts";
import type { PROVIDERS } from "../relay.schemas";

export const PROVIDER_LABELS: Record<(typeof PROVIDERS)[number], string> = {
  stripe: "Stripe",
  github: "GitHub",
  standard: "Standard Webhooks, Svix",
  generic: "Other (HMAC or none)",
};

/** Who a source's address is given to, in a sentence. */
export const SENDER_NAMES: Record<(typeof PROVIDERS)[number], string> = { stripe: "Stripe", github: "GitHub", standard: "the sender", generic: "the sender" };

/** An event filter as typed in a form (`invoice.paid, customer.*`): its entries. */
export function filterTypes(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

export function Health(props: { d: { enabled: boolean; disabled_reason: string | null; failing_since: string | null } }) {
  const { d } = props;
  if (!d.enabled) return <span class="badge gray">{d.disabled_reason === "failing" ? "disabled: failing for 5 days" : "disabled"}</span>;
  if (d.failing_since) {
    return (
      <span class="badge danger">
        failing since <Time iso={d.failing_since} />
      </span>
    );
  }
  return <span class="badge ok">healthy</span>;
}

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

/** A delivery's status as the shell's badge, in the relay's words. */
export function DeliveryBadge(props: { status: string }) {
  const tone = props.status === "delivered" ? "ok" : props.status === "failed" ? "danger" : props.status === "none" ? "gray" : "warn";
  return <StatusBadge status={STATUS_LABELS[props.status] ?? props.status} tone={tone} />;
}
