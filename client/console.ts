// Browser code of the console, bundled by scripts/build-assets.mjs into /assets/console.js. Pages
// work without it; it adds the copy buttons, the scope presets, the log explorer's live tail and
// the parts that refresh while something is pending (a relay event's attempts, a running scan).
// Each feature finds its elements by data attribute.
import { liveRegions } from "./live";
import { logTail } from "./logs-tail";

/** `<button data-copy="#id">`: copies the text of the element `#id` and says so for a moment. */
function copyButtons(root: ParentNode): void {
  for (const button of root.querySelectorAll<HTMLButtonElement>("button[data-copy]")) {
    button.hidden = false;
    button.addEventListener("click", async () => {
      const source = document.querySelector(button.dataset.copy ?? "");
      const text = source?.textContent?.trim() ?? "";
      const label = button.textContent;
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = "Copied";
      } catch {
        // No clipboard (an insecure origin): select the text so Ctrl-C copies it.
        const range = document.createRange();
        if (source) range.selectNodeContents(source);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
        button.textContent = "Press Ctrl-C";
      }
      setTimeout(() => (button.textContent = label), 2000);
    });
  }
}

/** `<form data-presets>`: preset buttons tick a set of scope boxes (`data-scopes="a b c"`). */
function scopePresets(root: ParentNode): void {
  for (const button of root.querySelectorAll<HTMLButtonElement>("button[data-scopes]")) {
    const form = button.form;
    if (!form) continue;
    button.addEventListener("click", (event) => {
      event.preventDefault();
      const wanted = new Set((button.dataset.scopes ?? "").split(" "));
      for (const box of form.querySelectorAll<HTMLInputElement>("input[name=scopes]")) box.checked = wanted.has(box.value);
    });
  }
}

copyButtons(document);
scopePresets(document);
logTail(document);
liveRegions(document);
document.addEventListener("console:replaced", (event) => copyButtons((event as CustomEvent<HTMLElement>).detail));
