import { SELF } from "cloudflare:test";
import { expect, it } from "vitest";
import { setupTeam } from "../helpers/api";

it("30 parallel requests of one team in their own contexts", async () => {
  const team = await setupTeam({ scopes: ["billing:read"] });
  const answers = await Promise.all(
    Array.from({ length: 30 }, () => SELF.fetch("http://app.test/api/v1/usage", { headers: { authorization: `Bearer ${team.key}`, "cf-connecting-ip": "203.0.113.7" } })),
  );
  for (const res of answers) expect(res.status).toBe(200);
});
