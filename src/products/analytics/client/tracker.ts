// The tracker served at {APP_URL}/a/script.js (bundled by scripts/build-assets.mjs; under 2 KB,
// a test holds it there). Plausible's script contract: `<script defer data-domain="<site id>"
// src=".../a/script.js">`, optional `data-api` (default: /api/event of the script's origin). It
// sends a pageview on load and on every history navigation (pushState, replaceState to another
// path, popstate), and `window.plausible(name, {props, callback})` sends a custom event; calls
// queued before it loaded (`window.plausible.q`) are sent first. Each event goes with sendBeacon
// (a text/plain JSON body, so no CORS preflight), or fetch keepalive where there is none. No
// cookie and no storage, except Plausible's opt-out: localStorage.plausible_ignore = "true".

type Options = { props?: Record<string, string | number | boolean>; callback?: () => void; u?: string };
type Plausible = ((name: string, options?: Options) => void) & { q?: IArguments[] };

const script = document.currentScript as HTMLScriptElement | null;
const domain = script?.getAttribute("data-domain") ?? "";
const api = script?.getAttribute("data-api") ?? `${new URL(script?.src ?? location.href).origin}/api/event`;

function send(name: string, options: Options = {}): void {
  let ignored = false;
  try {
    ignored = localStorage.getItem("plausible_ignore") === "true";
  } catch {}
  if (ignored || !domain) {
    options.callback?.();
    return;
  }
  const body = JSON.stringify({ n: name, u: options.u ?? location.href, d: domain, r: document.referrer || null, p: options.props });
  if (!navigator.sendBeacon?.(api, body)) {
    void fetch(api, { method: "POST", body, keepalive: true, headers: { "Content-Type": "text/plain" } }).catch(() => undefined);
  }
  options.callback?.();
}

const queued = (window as unknown as { plausible?: Plausible }).plausible?.q ?? [];
const plausible: Plausible = (name, options) => send(name, options);
(window as unknown as { plausible: Plausible }).plausible = plausible;
for (const args of queued) send(args[0] as string, args[1] as Options | undefined);

let lastPath = "";
function pageview(): void {
  if (location.pathname === lastPath) return;
  lastPath = location.pathname;
  send("pageview");
}

for (const method of ["pushState", "replaceState"] as const) {
  const original = history[method];
  history[method] = function (this: History, ...args: Parameters<History["pushState"]>) {
    original.apply(this, args);
    pageview();
  };
}
addEventListener("popstate", pageview);
pageview();
