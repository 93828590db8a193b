// The body of POST /api/event as Plausible's Events API takes it: JSON (sent as application/json,
// or as text/plain by the tracker's sendBeacon), long or short field names (`name`/`n`, `url`/`u`,
// `domain`/`d`, `referrer`/`r`, `props`/`p`), unknown fields ignored. `props` may be an object or
// a JSON string of one (older trackers send it so); values are strings, numbers or booleans (kept
// as strings; null values are dropped, as Plausible does); more than MAX_PROPS keys, a value over
// MAX_PROP_VALUE_CHARS characters, a name over MAX_NAME_CHARS, a missing field or a URL that is
// not http(s) answer 400 `{error}`. No Hono context here.
import { ApiError } from "../../platform/errors";
import { MAX_NAME_CHARS, MAX_PROP_KEY_CHARS, MAX_PROP_VALUE_CHARS, MAX_PROPS, MAX_URL_CHARS } from "./analytics.schemas";

export interface EventInput {
  name: string;
  url: URL;
  /** The site id the event names. */
  domain: string;
  referrer: string | null;
  props: Record<string, string> | null;
}

const bad = (message: string) => ApiError.badRequest(message);

/** The first of the long and short names that is present. */
function field(body: Record<string, unknown>, long: string, short: string): unknown {
  return body[long] !== undefined ? body[long] : body[short];
}

/** Parses an event body (any content type: its text must be a JSON object). */
export function parseEvent(text: string): EventInput {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw bad("Malformed JSON in request body");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw bad("The body must be a JSON object");
  const b = body as Record<string, unknown>;

  const name = field(b, "name", "n");
  if (typeof name !== "string" || name.trim() === "") throw bad("name is required");
  if (name.length > MAX_NAME_CHARS) throw bad(`name must be at most ${MAX_NAME_CHARS} characters`);

  const domain = field(b, "domain", "d");
  if (typeof domain !== "string" || domain.trim() === "") throw bad("domain is required");

  const rawUrl = field(b, "url", "u");
  if (typeof rawUrl !== "string" || rawUrl === "") throw bad("url is required");
  if (rawUrl.length > MAX_URL_CHARS) throw bad(`url must be at most ${MAX_URL_CHARS} characters`);
  const url = URL.canParse(rawUrl) ? new URL(rawUrl) : null;
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) throw bad("url must be an absolute http(s) URL");

  const referrer = field(b, "referrer", "r");
  if (referrer !== undefined && referrer !== null && typeof referrer !== "string") throw bad("referrer must be a string");

  return {
    name,
    url,
    domain: domain.trim(),
    referrer: typeof referrer === "string" && referrer !== "" ? referrer.slice(0, MAX_URL_CHARS) : null,
    props: parseProps(field(b, "props", "p")),
  };
}

function parseProps(raw: unknown): Record<string, string> | null {
  if (raw === undefined || raw === null) return null;
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw bad("props must be an object");
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw bad("props must be an object");
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== null);
  if (entries.length > MAX_PROPS) throw bad(`props may have at most ${MAX_PROPS} keys`);
  if (entries.length === 0) return null;
  const props: Record<string, string> = {};
  for (const [key, v] of entries) {
    if (key === "" || key.length > MAX_PROP_KEY_CHARS) throw bad(`a prop name must be 1 to ${MAX_PROP_KEY_CHARS} characters`);
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") throw bad(`prop ${key} must be a string, number or boolean`);
    const text = String(v);
    if (text.length > MAX_PROP_VALUE_CHARS) throw bad(`prop values must be at most ${MAX_PROP_VALUE_CHARS} characters`);
    Object.defineProperty(props, key, { value: text, enumerable: true, writable: true, configurable: true });
  }
  return props;
}

/** Host without a leading `www.`, lower case (Plausible's sanitize_hostname). */
export function bareHost(host: string): string {
  const lower = host.toLowerCase();
  return lower.startsWith("www.") ? lower.slice(4) : lower;
}

/** True when the event's URL is on the site's domain or under it. */
export function onSiteDomain(url: URL, domain: string): boolean {
  const host = bareHost(url.hostname);
  return host === domain || host.endsWith(`.${domain}`);
}

/** The page an event counts for: the pathname (with the query string when the site keeps it), at most MAX_URL_CHARS. */
export function pageOf(url: URL, keepQueryString: boolean): string {
  const path = url.pathname || "/";
  return (keepQueryString ? path + url.search : path).slice(0, MAX_URL_CHARS);
}
