// Forms end to end: real HTML forms on a page of another origin (a local server standing for a
// customer's site), posted from Chromium to `wrangler dev`, urlencoded and multipart with a file,
// following the 303 back to the site; the submissions and the file are then read through the API.
// A form without a redirect lands on the hosted thank-you page (checked with axe). A post from an
// origin the form does not allow is refused with 403. The console: a form created in Chromium with
// its settings (fields, webhook: its secret shown once), then the list, a form's inbox, spam and
// settings at 1280 and 390 px, axe-clean and never wider than the screen; screenshots in
// test-results/console/ (files named forms-*).
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { ROOT } from "../lib/dev-server.mjs";
import { assert, eventually, expectStatus, need, request } from "./http.mjs";
import { checkAxe, launchBrowser } from "./browser.mjs";

const SHOTS = join(ROOT, "test-results", "console");

/** A local "customer site": `/` with the two forms, `/done` where visitors land. */
async function startSite(endpoint) {
  let origin = "";
  const server = createServer((req, res) => {
    const url = new URL(req.url, origin);
    if (url.pathname === "/done") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><html lang="en"><title>Done</title><h1 id="done">Thanks from the site</h1></html>`);
      return;
    }
    const next = `${origin}/done`;
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><html lang="en"><head><title>Contact</title></head><body>
<form id="plain" action="${endpoint}" method="POST">
  <label>Email <input type="email" name="email" value="ada@example.com"></label>
  <label>Topic <input type="checkbox" name="topic" value="sales" checked></label>
  <label>Topic <input type="checkbox" name="topic" value="support" checked></label>
  <input type="hidden" name="_next" value="${next}">
  <input type="text" name="_gotcha" style="display:none" tabindex="-1" autocomplete="off">
  <button type="submit">Send plain</button>
</form>
<form id="upload" action="${endpoint}" method="POST" enctype="multipart/form-data">
  <label>Name <input type="text" name="name" value="Grace"></label>
  <label>CV <input type="file" name="cv"></label>
  <input type="hidden" name="_next" value="${next}">
  <button type="submit">Send upload</button>
</form>
</body></html>`);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${server.address().port}`;
  return { origin, close: () => new Promise((resolve) => server.close(resolve)) };
}

export async function formsChecks({ url, adminToken, createTeamWithKey, defer }) {
  const ownerEmail = `forms-${Date.now()}@example.com`;
  const team = await createTeamWithKey({ plan: "pro", name: "Forms shop", ownerEmail, domains: [] });
  const key = team.key;
  // The form's address is known before the site starts; its origins are set once the site runs.
  const created = expectStatus(
    await request(url, "POST", "/api/v1/forms", { key, body: { name: "Contact", files: { enabled: true, max_bytes: 1024 * 1024 } } }),
    201,
    "create form",
  );
  const form = created.body.data;
  const site = await startSite(form.endpoint);
  defer(site.close);
  expectStatus(
    await request(url, "PATCH", `/api/v1/forms/${form.id}`, { key, body: { allowed_origins: [site.origin], redirect_url: `${site.origin}/done` } }),
    200,
    "allow the site",
  );
  let browser;
  const launch = async () => (browser ??= await launchBrowser(defer));
  const inbox = async () => expectStatus(await request(url, "GET", `/api/v1/forms/${form.id}/submissions`, { key }), 200, "list").body.data;

  return {
    "forms: a urlencoded HTML form posted from Chromium follows the 303 back to the site": async () => {
      const page = await (await launch()).newPage();
      await page.goto(site.origin);
      await Promise.all([page.waitForURL(`${site.origin}/done`), page.click("#plain button[type=submit]")]);
      assert.equal(await page.locator("#done").textContent(), "Thanks from the site");
      const [s] = await eventually(async () => {
        const list = await inbox();
        return list.length === 1 ? list : null;
      });
      assert.deepEqual(s.fields, { email: "ada@example.com", topic: ["sales", "support"] });
      assert.equal(s.origin, site.origin);
      await page.close();
    },

    "forms: a multipart HTML form with a file, the file served only as an attachment": async () => {
      const page = await (await launch()).newPage();
      await page.goto(site.origin);
      await page.setInputFiles("#upload input[type=file]", { name: "cv.html", mimeType: "text/html", buffer: Buffer.from("<script>alert(1)</script>") });
      await Promise.all([page.waitForURL(`${site.origin}/done`), page.click("#upload button[type=submit]")]);
      const withFile = await eventually(async () => (await inbox()).find((s) => s.files.length === 1));
      assert.deepEqual(withFile.fields, { name: "Grace" });
      const file = need(withFile.files[0], "the stored file");
      assert.equal(file.name, "cv.html");
      const res = await fetch(`${url}/api/v1/forms/${form.id}/submissions/${withFile.id}/files/${file.id}`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "application/octet-stream");
      assert.equal(res.headers.get("content-security-policy"), "sandbox");
      assert.match(res.headers.get("content-disposition"), /^attachment; filename="cv.html"$/);
      assert.equal(await res.text(), "<script>alert(1)</script>");
      await page.close();
    },

    "forms: without a redirect a browser lands on the hosted thank-you page (axe-clean, no script)": async () => {
      const bare = expectStatus(await request(url, "POST", "/api/v1/forms", { key, body: { name: "Newsletter" } }), 201, "create bare form").body.data;
      const page = await (await launch()).newPage();
      await page.setContent(
        `<!doctype html><html lang="en"><title>x</title><form action="${bare.endpoint}" method="POST"><label>Email <input name="email" value="a@example.com"></label><button>Go</button></form></html>`,
      );
      await Promise.all([page.waitForURL(`${bare.endpoint}/thanks`), page.click("button")]);
      assert.equal((await page.locator("[data-testid=thanks]").textContent()).trim(), "Thank you");
      assert.equal(await page.locator("script").count(), 0);
      await checkAxe(page, "the hosted thank-you page");
      await page.close();
    },

    "forms: a JSON post from an origin the form does not allow answers 403 ORIGIN_NOT_ALLOWED": async () => {
      const res = await request(url, "POST", `/f/${form.id}`, { body: { email: "x@example.com" }, headers: { origin: "https://evil.example" } });
      expectStatus(res, 403, "foreign origin");
      assert.equal(res.body.code, "ORIGIN_NOT_ALLOWED");
      const ok = await request(url, "POST", `/f/${form.id}`, { body: { email: "x@example.com" }, headers: { origin: site.origin } });
      expectStatus(ok, 200, "allowed origin");
      assert.equal(ok.headers.get("access-control-allow-origin"), site.origin);
    },

    "forms: the console creates a form with its settings, and its pages are axe-clean at 1280 and 390 px, never wider": async () => {
      mkdirSync(SHOTS, { recursive: true });
      const minted = expectStatus(await request(url, "POST", "/api/v1/admin/sign-in-links", { key: adminToken, body: { email: ownerEmail } }), 201, "link");
      const app = `http://localhost:${new URL(url).port}`;
      const at = (path) => `${app}/console/teams/${team.teamId}/${path}`;
      const context = await (await launch()).newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await page.goto(minted.body.data.url.replace(/^http:\/\/[^/]+/, app));
      await page.click("[data-testid=confirm-sign-in]");
      await page.waitForURL(/\/keys$/);

      await page.goto(at("forms"));
      const create = page.locator("form[data-testid=create-form]");
      await create.locator("input[name=name]").fill("Support");
      await create.locator("textarea[name=fields]").fill("email | email | required\nmessage | text | max 2000");
      await create.locator("textarea[name=notify_emails]").fill(ownerEmail);
      await create.locator("input[name=webhook_url]").fill(`${site.origin}/hook`);
      await create.locator("input[name=retention_days]").fill("30");
      await Promise.all([page.waitForURL(/\?notice=created-webhook$/), create.locator("button[type=submit]").click()]);
      const secret = (await page.textContent("[data-testid=webhook-secret]")).trim();
      assert.match(secret, /^whsec_/);
      const made = expectStatus(await request(url, "GET", "/api/v1/forms", { key }), 200, "forms").body.data.find((f) => f.name === "Support");
      assert.deepEqual(
        [made.fields.map((f) => f.name), made.notify_emails, made.webhook_url, made.retention_days],
        [["email", "message"], [ownerEmail], `${site.origin}/hook`, 30],
      );
      await page.reload();
      assert.equal(await page.locator("[data-testid=webhook-secret]").count(), 0, "the secret is shown once");

      // A submission in the inbox and one in spam, so the pages have rows.
      await request(url, "POST", `/f/${made.id}`, { body: { email: "ada@example.com", message: "Hello <b>there</b>" } });
      await request(url, "POST", `/f/${made.id}`, { body: { email: "bot@example.com", _gotcha: "x" } });
      const pages = [
        ["list", "forms"],
        ["inbox", `forms/${made.id}`],
        ["spam", `forms/${made.id}?status=spam`],
        ["settings", `forms/${made.id}/settings`],
      ];
      const widths = {};
      let n = 0;
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
        for (const [name, path] of pages) {
          await page.goto(at(path));
          widths[`${name} at ${width}`] = await page.evaluate(() => document.documentElement.scrollWidth);
          await page.screenshot({ path: join(SHOTS, `forms-${String(++n).padStart(2, "0")}-${width}-${name}.png`), fullPage: true });
          await checkAxe(page, `forms ${name} at ${width} px`);
        }
      }
      assert.deepEqual(
        Object.entries(widths).filter(([name, w]) => name.endsWith("at 390") && w > 390),
        [],
        "forms pages wider than the screen",
      );
      assert.equal(await page.locator("[data-testid=submission-row]").count(), 0, "the settings page lists no submissions");
      await context.close();
    },
  };
}
