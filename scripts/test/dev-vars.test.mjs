// Two `npm start` runs in one checkout: each port has its own secrets file, and removing one run's
// file leaves the other's alone (scripts/lib/dev-server.mjs, used by scripts/start.mjs).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { effectiveVarsPath, freshSecrets, parseVars, writeEffectiveVars } from "../lib/dev-server.mjs";

const root = mkdtempSync(join(tmpdir(), "edge-dev-vars-"));
after(() => rmSync(root, { recursive: true, force: true }));

test("each port gets its own file, so a second server keeps the first one's operator token", () => {
  const first = writeEffectiveVars(8787, freshSecrets("token-of-8787"), root);
  const second = writeEffectiveVars(8788, freshSecrets("token-of-8788"), root);
  assert.notEqual(first.path, second.path);
  assert.equal(first.path, effectiveVarsPath(8787, root));
  assert.equal(parseVars(readFileSync(first.path, "utf8")).ADMIN_TOKEN, "token-of-8787");
  assert.equal(parseVars(readFileSync(second.path, "utf8")).ADMIN_TOKEN, "token-of-8788");
  // Secrets: readable by the owner only.
  assert.equal(statSync(first.path).mode & 0o777, 0o600);

  second.remove();
  assert.equal(existsSync(second.path), false);
  assert.equal(parseVars(readFileSync(first.path, "utf8")).ADMIN_TOKEN, "token-of-8787");
  second.remove(); // a second call (signal handler, then "exit") is harmless
  first.remove();
  assert.equal(existsSync(first.path), false);
});

test("a restart on the same port replaces that port's file with the new run's secrets", () => {
  writeEffectiveVars(9000, freshSecrets("old"), root);
  const again = writeEffectiveVars(9000, freshSecrets("new"), root);
  assert.equal(parseVars(readFileSync(again.path, "utf8")).ADMIN_TOKEN, "new");
  again.remove();
});

test("the demo key holds every scope of the specification and no extension scope (keys:read, keys:write)", async () => {
  const { demoScopes } = await import("../lib/dev-server.mjs");
  const ALL_SCOPES = await demoScopes();
  // The specification's 13, and the named products' six (flags, forms, analytics: NAMED-PRODUCTS.md).
  assert.equal(ALL_SCOPES.length, 19);
  assert.ok(!ALL_SCOPES.some((scope) => scope.startsWith("keys:")));
});
