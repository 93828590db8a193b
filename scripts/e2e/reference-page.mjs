// The API reference at /api/v1/docs in Debian's Chromium (playwright-core) against the running
// `wrangler dev`: it renders our title and logo and every tag with the Operator group last, loads
// nothing from another origin (no web fonts, no CDN, no telemetry), and shows none of Scalar's
// "Ask AI", MCP or developer-tools ("Deploy") buttons. A screenshot goes to test-results/.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../lib/dev-server.mjs";
import { assert, eventually } from "./http.mjs";
import { launchBrowser } from "./browser.mjs";

const SHOTS = join(ROOT, "test-results", "reference-page");

export async function referencePageChecks({ url, defer }) {
  mkdirSync(SHOTS, { recursive: true });
  const browser = await launchBrowser(defer);
  return {
    "reference page: our title and logo, Operator last, nothing from another origin, no AI, MCP or Deploy buttons": async () => {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const origin = new URL(url).origin;
      const elsewhere = [];
      page.on("request", (req) => {
        const target = req.url();
        if (!target.startsWith("data:") && new URL(target).origin !== origin) elsewhere.push(target);
      });
      await page.goto(`${url}/api/v1/docs`, { waitUntil: "networkidle" });
      assert.equal(await page.title(), "Edge Platform API reference");
      const text = await eventually(async () => {
        const body = await page.evaluate(() => document.body.innerText);
        assert.ok(body.includes("Mail: sending domains") && body.includes("Operator"), "the sidebar has rendered");
        return body;
      });
      await page.screenshot({ path: join(SHOTS, "reference.png") });
      assert.deepEqual(elsewhere, []);
      for (const word of ["Ask AI", "Generate MCP", "Connect MCP", "Deploy", "Developer Tools"]) assert.ok(!text.includes(word), `the page shows "${word}"`);
      // Tags in the document's order, the operator's group the last of them.
      // The platform's tags, then each product's in the order of src/products/index.ts, the operator's last.
      const tags = ["Usage", "Logs", "Webhook relay", "Surveys", "Mail", "Push", "Audit", "Operator"];
      const positions = tags.map((tag) => text.indexOf(`\n${tag}\n`));
      assert.ok(
        positions.every((p) => p >= 0),
        `every tag listed: ${tags.filter((_, i) => positions[i] < 0)}`,
      );
      assert.deepEqual(
        [...positions].sort((a, b) => a - b),
        positions,
        "tags in reading order, Operator last",
      );
      const logo = await page.evaluate(() => getComputedStyle(document.querySelector(".t-doc__sidebar"), "::before").backgroundImage);
      assert.match(logo, /^url\("data:image\/svg\+xml;base64,/);
      await page.close();
    },
  };
}
