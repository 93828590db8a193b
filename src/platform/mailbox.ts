// Email addresses, parsed one way for every product: mail's
// senders and recipients, audit's share recipients. A mailbox is one RFC 5322 address, with a
// display name or not; anything else (several addresses, a group, a line break) is refused.
import { parseOneAddress, type ParsedMailbox } from "email-addresses";

/** CR or LF: never in an address or a header value. */
export const LINE_BREAK = /[\r\n]/;
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * One address parser for every stored and sent address (docs/ARCHITECTURE.md "Addresses and headers"): RFC
 * 5322 parsing by `email-addresses`, one mailbox per string. A string that holds more than one
 * address (`victim@x.test, y <ok@sandbox>`), a group, or a display name with unquoted `,` `<` `>`
 * `;` does not parse as one mailbox and is refused. Returns the bare address (lower-cased domain)
 * and the display name, or null.
 */
export function parseMailbox(raw: string): { address: string; name: string | null } | null {
  if (raw.length > 400 || LINE_BREAK.test(raw)) return null;
  const parsed = parseOneAddress({ input: raw.trim(), rfc6532: true });
  if (parsed?.type !== "mailbox") return null;
  const mailbox = parsed as ParsedMailbox;
  const address = mailbox.address;
  if (address.length > 320) return null;
  const at = address.lastIndexOf("@");
  if (at < 1) return null;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1).toLowerCase();
  if (local.length > 64 || !LOCAL.test(local) || local.startsWith(".") || local.endsWith(".") || local.includes("..")) return null;
  const labels = domain.split(".");
  if (labels.length < 2 || domain.length > 253 || !labels.every((l) => LABEL.test(l))) return null;
  if (/^\d+$/.test(labels[labels.length - 1])) return null;
  const name = mailbox.name?.trim() || null;
  if (name && name.length > 200) return null;
  return { address: `${local}@${domain}`, name };
}

/** The bare address of `user@host` or `Name <user@host>`, lower-cased domain; null when invalid. */
export function parseAddress(raw: string): string | null {
  return parseMailbox(raw)?.address ?? null;
}

/** The address as it is stored and sent: the parsed address, its display name re-quoted. */
export function canonicalAddress(raw: string): string | null {
  const mailbox = parseMailbox(raw);
  if (!mailbox) return null;
  return mailbox.name ? `"${mailbox.name.replace(/["\\]/g, "\\$&")}" <${mailbox.address}>` : mailbox.address;
}

export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf("@") + 1).toLowerCase();
}
