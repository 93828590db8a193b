// What every browser check of the e2e run shares: Debian's Chromium launched headless through
// playwright-core (CHROMIUM_PATH to use another), and axe-core run in a page.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";
import { assert } from "./http.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** A headless Chromium, closed by `defer` when given (the run's clean-up). */
export async function launchBrowser(defer) {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
    ],
  });
  defer?.(() => browser.close());
  return browser;
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, so the page's CSP, which
 * allows no inline script, stays as it is) and fails on any serious or critical violation.
 */
export async function checkAxe(page, what) {
  await page.evaluate(AXE);
  const result = await page.evaluate(() => globalThis.axe.run(document, { resultTypes: ["violations"] }));
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(
    bad.map(
      (v) =>
        `${v.id} (${v.impact}): ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(" "))
          .join(", ")}`,
    ),
    [],
    `axe-core on ${what}`,
  );
}
