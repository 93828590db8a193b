import { it, expect } from "vitest";
import { env, SELF } from "cloudflare:test";
import { call, setupTeam } from "../helpers/api";
import { setClock } from "../../src/platform/clock";
it("probe", async () => {
  const r = await call("GET", "/standalone.js");
  console.log("exports standalone", r.status, (await r.text()).slice(0, 80));
  try { const s = await SELF.fetch("http://app.test/standalone.js"); console.log("SELF standalone", s.status, (await s.text()).slice(0, 80)); } catch (e) { console.log("SELF err", String(e)); }
  console.log("ASSETS", typeof env.ASSETS);
  if (env.ASSETS) { const a = await env.ASSETS.fetch("http://app.test/standalone.js"); console.log("ASSETS fetch", a.status); }
  const o = await call("GET", "openapi.json");
  const doc: any = await o.json();
  console.log(Object.keys(doc.paths), JSON.stringify(doc.components.securitySchemes));
  const d = await call("GET", "docs");
  console.log(d.status, d.headers.get("content-type"), await d.text());
  const team = await setupTeam({ plan: "free" });
  setClock(Date.UTC(2031, 1, 10, 0, 0, 30));
  const u = await call("GET", "usage", { key: team.key });
  console.log(u.status, JSON.stringify([...u.headers]), await u.text());
  setClock(null);
  const sp = { ...env, RATE_LIMITS: "off" };
  console.log(Object.keys(sp));
});
