// No dead ends on a local server: a console page read on another loopback address of it goes to
// APP_URL's (and a form sent from there is refused naming that address, changing nothing); the
// local outbox's pages say the link is in the terminal, not in a mailbox; /favicon.ico is this
// Worker's icon; GET /api/v1 answers an index of the reference, the document and the health
// check; and every address the start banner (scripts/lib/start-banner.ts) prints answers.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { bannerLinks, startBanner } from "../../scripts/lib/start-banner";
import { FAVICON } from "../../src/platform/favicon";
import { admin, call, json, ORIGIN, setupTeam } from "../helpers/api";
import { consoleTeam, mailedLinks, page, settledPage } from "../helpers/console";

/** The "check your email" page a sign-in or sign-up redirects to (post/redirect/get), read with the cookie that carries the address. */
function checkEmailCookie(res: Response): string {
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toBe("/console/check-email");
  return /edp_check=([^;]*)/.exec(res.headers.get("set-cookie") ?? "")?.[0] ?? "";
}

const LOCAL_APP = "http://localhost:8787";
/** The pool's bindings with a local server's APP_URL. */
const local = () => ({ ...env, APP_URL: LOCAL_APP });
const address = (name: string) => `${name}-${crypto.randomUUID().slice(0, 8)}@example.com`;

describe("a console request on another address of a local server", () => {
  it("a page read at 127.0.0.1 or [::1] is sent to the same path and query at APP_URL's origin", async () => {
    for (const other of ["http://127.0.0.1:8787", "http://[::1]:8787", "http://localhost:9000"]) {
      const res = await call("GET", `${other}/console/sign-in?next=%2Fconsole`, { env: local() });
      expect(res.status, other).toBe(307);
      expect(res.headers.get("location")).toBe(`${LOCAL_APP}/console/sign-in?next=%2Fconsole`);
    }
    // At APP_URL's own origin the page answers.
    expect((await call("GET", `${LOCAL_APP}/console/sign-in`, { env: local() })).status).toBe(200);
    // Not a console address: untouched.
    expect((await call("GET", "http://127.0.0.1:8787/api/v1", { env: local() })).status).toBe(200);
  });

  it("a form sent from the other address is refused with the address to use, and nothing is done", async () => {
    const email = address("elsewhere");
    const team = await setupTeam({ ownerEmail: email });
    expect(team.teamId).toBeTruthy();
    const res = await call("POST", "http://127.0.0.1:8787/console/sign-in", {
      env: local(),
      headers: { origin: "http://127.0.0.1:8787", "content-type": "application/x-www-form-urlencoded" },
      raw: new URLSearchParams({ email }).toString(),
    });
    expect(res.status).toBe(403);
    const html = await res.text();
    expect(html).toContain("it was sent from http://127.0.0.1:8787");
    expect(html).toContain(`Open the console at ${LOCAL_APP}/console and send it again`);
    expect(await mailedLinks(email)).toHaveLength(0);
  });

  it("a deployed server (APP_URL not a loopback address) sends nobody elsewhere", async () => {
    // The pool's APP_URL is http://app.test.
    for (const other of ["http://127.0.0.1:8787", "http://app-other.test"]) {
      expect((await call("GET", `${other}/console/sign-in`)).status, other).toBe(200);
    }
    const refused = await page("POST", "/console/sign-in", { origin: "https://evil.test", form: { email: address("x") } });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain(`Open the console at ${ORIGIN}/console`);
  });
});

describe("with the local outbox, the pages say where a link went", () => {
  it("sign-in and sign-up: the terminal of npm start, not an email", async () => {
    const member = await consoleTeam("viewer");
    for (const [path, form] of [
      ["/console/sign-in", { email: member.email }],
      ["/console/sign-up", { email: address("new"), team_name: "Terminal team" }],
    ] as const) {
      const cookie = checkEmailCookie(await settledPage("POST", path, { form }));
      const res = await settledPage("GET", "/console/check-email", { cookie });
      expect(res.status, path).toBe(200);
      const html = await res.text();
      expect(html).toContain('data-testid="check-terminal"');
      expect(html).toContain("printed in the terminal running <code>npm start</code>");
      expect(html).not.toContain("Check your email");
    }
    // The link really is where the page says: mailed to the outbox (and logged), not sent.
    expect(await mailedLinks(member.email)).toHaveLength(1);
  });

  it("with a real mail transport the page says to check the mailbox", async () => {
    const mailEnv = { ...env, MAIL_TRANSPORT: "http", MAIL_HTTP_URL: "https://mail.invalid/send" };
    const posted = await call("POST", "/console/sign-in", {
      env: mailEnv,
      headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
      raw: new URLSearchParams({ email: address("stranger") }).toString(),
    });
    const res = await call("GET", "/console/check-email", { env: mailEnv, headers: { cookie: checkEmailCookie(posted) } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('data-testid="check-email"');
    expect(html).not.toContain("npm start");
  });

  it("an invitation says its link is in the terminal", async () => {
    const team = await consoleTeam("admin");
    const base = `/console/teams/${team.teamId}/members`;
    const sent = await page("POST", `${base}/invite`, { cookie: team.cookie, form: { email: address("invitee"), role: "viewer" } });
    expect(sent.status).toBe(303);
    const location = sent.headers.get("location") ?? "";
    expect(location).toBe(`${base}?notice=invited_terminal`);
    const html = await (await page("GET", location, { cookie: team.cookie })).text();
    expect(html).toContain("its link is printed in the terminal running npm start");
    expect(html).not.toContain("Invitation sent");
  });
});

describe("/favicon.ico", () => {
  it("is a 32×32 icon from this Worker: the console's mark, opaque inside and clear at the corners", async () => {
    const res = await call("GET", "/favicon.ico");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/x-icon");
    expect(res.headers.get("cache-control")).toContain("max-age=");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes).toEqual(FAVICON);
    const view = new DataView(bytes.buffer);
    // ICONDIR: type 1, one image; its entry: 32×32, 32 bits, the image right after the directory.
    expect([view.getUint16(0, true), view.getUint16(2, true), view.getUint16(4, true)]).toEqual([0, 1, 1]);
    expect([bytes[6], bytes[7], view.getUint16(12, true), view.getUint32(18, true)]).toEqual([32, 32, 32, 22]);
    expect(view.getUint32(14, true)).toBe(bytes.length - 22);
    // BITMAPINFOHEADER: 40 bytes, 32 wide, 64 high (image and mask).
    expect([view.getUint32(22, true), view.getInt32(26, true), view.getInt32(30, true)]).toEqual([40, 32, 64]);
    const alpha = (x: number, y: number) => bytes[22 + 40 + ((31 - y) * 32 + x) * 4 + 3];
    expect(alpha(16, 16)).toBe(255);
    expect(alpha(0, 0)).toBe(0);
    expect(alpha(31, 31)).toBe(0);
  });

  it("answers without a credential or a session, and is the image the console's CSP allows (self)", async () => {
    expect((await call("GET", "/favicon.ico", { headers: { cookie: "edp_session=nope" } })).status).toBe(200);
    const csp = (await page("GET", "/console/sign-in")).headers.get("content-security-policy") ?? "";
    expect(csp).toContain("img-src 'self'");
  });
});

describe("GET /api/v1", () => {
  it("answers an index whose links all answer: the reference, the document, the health check, the console", async () => {
    for (const path of ["/api/v1", "/api/v1/"]) {
      const res = await call("GET", path);
      expect(res.status, path).toBe(200);
      const { data } = await json(res);
      expect(data).toEqual({
        name: "Edge Platform API",
        version: "v1",
        links: {
          reference: `${ORIGIN}/api/v1/docs`,
          openapi: `${ORIGIN}/api/v1/openapi.json`,
          health: `${ORIGIN}/health`,
          console: `${ORIGIN}/console`,
        },
      });
    }
    const links = (await json(await call("GET", "/api/v1"))).data.links;
    const reference = await call("GET", links.reference);
    expect([reference.status, reference.headers.get("content-type")]).toEqual([200, expect.stringContaining("text/html")]);
    expect((await json(await call("GET", links.openapi))).openapi).toBe("3.1.0");
    expect(await json(await call("GET", links.health))).toEqual({ ok: true });
    const consoleRes = await call("GET", links.console);
    expect([200, 303]).toContain(consoleRes.status);
  });

  it("is still a 404 for what is not there below it", async () => {
    expect((await call("GET", "/api/v1/no-such-thing")).status).toBe(404);
  });
});

describe("the start banner", () => {
  it("every address it prints answers (none 404), the one-time sign-in link included", async () => {
    const owner = address("owner");
    const team = await setupTeam({ ownerEmail: null });
    expect((await admin("POST", `teams/${team.teamId}/members`, { email: owner, role: "owner" })).status).toBe(201);
    const link = await admin("POST", "sign-in-links", { email: owner });
    expect(link.status).toBe(201);
    const signInLink: string = (await json(link)).data.url;
    const banner = startBanner({ base: ORIGIN, teamId: team.teamId, key: team.key, owner, signInLink, domain: "acme.dev" });
    const links = bannerLinks(banner);
    expect(links).toEqual([
      ORIGIN,
      `${ORIGIN}/api/v1`,
      `${ORIGIN}/api/v1/docs`,
      `${ORIGIN}/console`,
      signInLink,
      `${ORIGIN}/console/sign-in`,
      `${ORIGIN}/api/v1/usage`,
    ]);
    for (const url of links) {
      // The key as the banner's curl sends it; pages ignore it.
      const res = await call("GET", url, { key: team.key });
      expect([200, 303], `${url} answered ${res.status}`).toContain(res.status);
    }
    // The sign-in link opens its confirm page.
    expect(await (await call("GET", signInLink)).text()).toContain('data-testid="confirm-sign-in"');
  });
});
