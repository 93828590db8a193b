// Live parts of console pages that refresh what changed: an element `[data-live="<url>"]` whose
// `data-pending` is "true" is fetched again from its URL (a fragment served under /console with the
// session cookie, never a key) and replaced by the answer's element of the same kind, until the
// answer says nothing is pending any more. The page reads the same without this script (it says to
// reload). The interval starts at FIRST_MS and grows to LAST_MS, so a delivery retried in an hour
// does not poll every two seconds for that hour; a hidden tab waits until it is shown again.

const FIRST_MS = 2_000;
const LAST_MS = 30_000;

function schedule(region: HTMLElement, delay: number): void {
  setTimeout(() => void refresh(region, delay), delay);
}

async function refresh(region: HTMLElement, delay: number): Promise<void> {
  if (!region.isConnected) return;
  if (document.hidden) {
    document.addEventListener("visibilitychange", () => schedule(region, 0), { once: true });
    return;
  }
  const url = region.dataset.live ?? "";
  let next: HTMLElement | null = null;
  try {
    const res = await fetch(url, { credentials: "same-origin", headers: { accept: "text/html" }, redirect: "manual" });
    // Signed out (a redirect to sign-in), membership ended, the resource deleted: stop; the page as it stands says the rest.
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    next = doc.querySelector<HTMLElement>("[data-live]");
  } catch {
    schedule(region, Math.min(delay * 2, LAST_MS));
    return;
  }
  if (!next || next.dataset.live !== url) return;
  const adopted = document.importNode(next, true);
  region.replaceWith(adopted);
  // Copy buttons and other enhancements of the new part.
  document.dispatchEvent(new CustomEvent("console:replaced", { detail: adopted }));
  if (adopted.dataset.pending === "true") schedule(adopted, Math.min(Math.round(delay * 1.5), LAST_MS));
}

export function liveRegions(root: ParentNode): void {
  for (const region of root.querySelectorAll<HTMLElement>("[data-live]")) {
    if (region.dataset.pending === "true") schedule(region, FIRST_MS);
  }
}
