// The check of the packed client package (scripts/lib/client-package.mjs, `npm run check:client`)
// fails for the faults the package used to have: an extensionless import inside its types (TS2834
// under nodenext; with skipLibCheck the types silently became `any`, which the wrong-use file's
// @ts-expect-error lines turn into TS2578), and a dependency missing from the consumer's folder.
// The passing run itself is `npm run check:client` (in CI).
import assert from "node:assert/strict";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { compilers, installConsumer, installProblems, SETTINGS, typeCheck } from "../lib/client-package.mjs";

const ts7 = compilers().find((c) => c.name === "TypeScript 7");
const [nodenext, nodenextSkip] = SETTINGS;
let dir;

before(() => {
  dir = installConsumer();
});
after(() => rmSync(dir, { recursive: true, force: true }));

test("the packed package installs with its own openapi-fetch, and its types hold under nodenext", { timeout: 240_000 }, () => {
  assert.deepEqual(installProblems(dir), []);
  const result = typeCheck(dir, ts7, nodenextSkip);
  assert.ok(result.ok, result.output);
});

test("types that lose their schema fail the check, with skipLibCheck off and on", { timeout: 240_000 }, () => {
  const types = join(dir, "node_modules", "@edge-platform", "client", "index.d.ts");
  const original = readFileSync(types, "utf8");
  writeFileSync(types, original.replace('from "./schema.js"', 'from "./schema"'));
  try {
    const strict = typeCheck(dir, ts7, nodenext);
    assert.equal(strict.ok, false);
    assert.match(strict.output, /index\.d\.ts\(\d+,\d+\): error TS2834/);
    // skipLibCheck hides the broken import: the types become `any`, every wrong use compiles,
    // and each @ts-expect-error of types.ts is reported unused.
    const skipped = typeCheck(dir, ts7, nodenextSkip);
    assert.equal(skipped.ok, false);
    assert.match(skipped.output, /types\.ts\(\d+,\d+\): error TS2578/);
    assert.doesNotMatch(skipped.output, /index\.d\.ts/);
  } finally {
    writeFileSync(types, original);
  }
});

test("a dependency the consumer's folder lacks is reported", () => {
  const fetchDir = join(dir, "node_modules", "openapi-fetch");
  renameSync(fetchDir, `${fetchDir}.away`);
  try {
    assert.deepEqual(installProblems(dir), ["openapi-fetch is not in the consumer's node_modules"]);
    assert.equal(typeCheck(dir, ts7, nodenextSkip).ok, false);
  } finally {
    renameSync(`${fetchDir}.away`, fetchDir);
  }
});
