// Referrer to source, Plausible's rules (Plausible.Ingestion.Source): a `utm_source`, `source` or
// `ref` query parameter of the page's URL names the source; else a referrer that is a valid
// external http(s) URL (not the page's own host, not localhost) does, as its known name or its host
// without `www.`; else there is none (shown as "Direct / None"). Known names, matched without
// regard to case on a tag too (`utm_source=google` is Google), come from the most common entries of
// Snowplow's referer-parser list (referers.yml, which Plausible's RefInspector reads) and of
// Plausible's own custom_sources.json (`ig` is Instagram, `hn` Hacker News); any other host is
// kept as the host.
import { bareHost } from "./analytics-event";

/** Hosts (the host itself or any host under it) and their source names. */
const KNOWN_HOSTS: ReadonlyArray<[RegExp, string]> = [
  [/(^|\.)google\.[a-z]{2,3}(\.[a-z]{2})?$/, "Google"],
  [/(^|\.)bing\.com$/, "Bing"],
  [/(^|\.)duckduckgo\.com$/, "DuckDuckGo"],
  [/(^|\.)yahoo\.(com|co\.jp|[a-z]{2})$/, "Yahoo!"],
  [/(^|\.)yandex\.(ru|com|[a-z]{2})$/, "Yandex"],
  [/(^|\.)baidu\.com$/, "Baidu"],
  [/(^|\.)ecosia\.org$/, "Ecosia"],
  [/(^|\.)search\.brave\.com$/, "Brave"],
  [/(^|\.)qwant\.com$/, "Qwant"],
  [/(^|\.)startpage\.com$/, "Startpage"],
  [/(^|\.)(facebook\.com|fb\.com|fb\.me)$/, "Facebook"],
  [/(^|\.)instagram\.com$/, "Instagram"],
  [/(^|\.)(twitter\.com|t\.co|x\.com)$/, "Twitter"],
  [/(^|\.)(linkedin\.com|lnkd\.in)$/, "LinkedIn"],
  [/(^|\.)reddit\.com$/, "Reddit"],
  [/(^|\.)(youtube\.com|youtu\.be)$/, "YouTube"],
  [/(^|\.)github\.com$/, "GitHub"],
  [/^news\.ycombinator\.com$/, "Hacker News"],
  [/(^|\.)pinterest\.[a-z.]+$/, "Pinterest"],
  [/(^|\.)wikipedia\.org$/, "Wikipedia"],
  [/(^|\.)tiktok\.com$/, "TikTok"],
  [/(^|\.)(vk\.com|vkontakte\.ru)$/, "VKontakte"],
  [/(^|\.)threads\.net$/, "Threads"],
  [/(^|\.)bsky\.app$/, "Bluesky"],
  [/(^|\.)producthunt\.com$/, "Product Hunt"],
  [/(^|\.)stackoverflow\.com$/, "Stack Overflow"],
  [/(^|\.)chatgpt\.com$|(^|\.)chat\.openai\.com$/, "ChatGPT"],
  [/(^|\.)perplexity\.ai$/, "Perplexity"],
];

/** Tags (utm_source, source, ref) and known names, lower case, to the name Plausible shows. */
const KNOWN_TAGS: Record<string, string> = Object.fromEntries([
  ...[...new Set(KNOWN_HOSTS.map(([, name]) => name))].map((name) => [name.toLowerCase(), name] as const),
  ["ig", "Instagram"],
  ["fb", "Facebook"],
  ["adwords", "Google"],
  ["yt", "YouTube"],
  ["tw", "Twitter"],
  ["x", "Twitter"],
  ["li", "LinkedIn"],
  ["hn", "Hacker News"],
  ["ddg", "DuckDuckGo"],
] as const);

/** Characters of a source kept. */
const SOURCE_MAX = 200;

/** The source of an event, or "" for none (Direct / None). */
export function resolveSource(url: URL, referrer: string | null): string {
  const tagged = url.searchParams.get("utm_source") || url.searchParams.get("source") || url.searchParams.get("ref");
  if (tagged) return (KNOWN_TAGS[tagged.toLowerCase()] ?? tagged).slice(0, SOURCE_MAX);
  if (!referrer || !URL.canParse(referrer.trim())) return "";
  const ref = new URL(referrer.trim());
  if (ref.protocol !== "http:" && ref.protocol !== "https:" && ref.protocol !== "android-app:") return "";
  const host = bareHost(ref.hostname);
  if (host === "" || host === "localhost" || host === bareHost(url.hostname)) return "";
  for (const [pattern, name] of KNOWN_HOSTS) if (pattern.test(host)) return name;
  return host.slice(0, SOURCE_MAX);
}
