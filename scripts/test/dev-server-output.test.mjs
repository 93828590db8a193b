// `npm start`'s filter of wrangler dev's output (quietOutputFilter, scripts/lib/dev-server.mjs),
// over what wrangler 4.164 printed at a real offline start (fixtures/wrangler-dev-start.txt, taken
// from `PORT=8899 npm start`): one bindings table, no Request.cf warning or its ENOTFOUND stack
// trace, every other line kept in order; and the same with wrangler's colours.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { quietOutputFilter } from "../lib/dev-server.mjs";

const captured = readFileSync(new URL("./fixtures/wrangler-dev-start.txt", import.meta.url), "utf8")
  .trimEnd()
  .split("\n");
const run = (lines) => {
  const filter = quietOutputFilter();
  return lines.map(filter).filter((line) => line !== null);
};

test("the captured start holds the noise the filter is for", () => {
  assert.equal(captured.filter((l) => l.startsWith("Your Worker has access")).length, 2);
  assert.equal(captured.filter((l) => l.includes("ENOTFOUND")).length, 2);
});

test("one bindings table, no Request.cf warning or stack trace, the rest kept in order", () => {
  const kept = run(captured);
  assert.equal(kept.filter((l) => l.startsWith("Your Worker has access")).length, 1);
  assert.equal(kept.filter((l) => l.startsWith("env.DB (edge-platform)")).length, 1);
  assert.ok(!kept.some((l) => /ENOTFOUND|Request\.cf|^\s+at |Connection status updated/.test(l)), kept.join("\n"));
  // Nothing else is lost: the banner, the table's rows once, the start and the ready line.
  const expected = captured.filter((l) => !/ENOTFOUND|Request\.cf|^\s+at |Connection status updated/.test(l));
  const secondTable = expected.indexOf(
    "Your Worker has access to the following bindings:",
    expected.indexOf("Your Worker has access to the following bindings:") + 1,
  );
  const tableEnd = expected.indexOf("", secondTable);
  assert.deepEqual(kept, [...expected.slice(0, secondTable), ...expected.slice(tableEnd + 1)]);
  assert.ok(kept.includes("⎔ Starting local server..."));
  assert.equal(kept.at(-1), "[wrangler:info] Ready on http://127.0.0.1:8899");
});

test("the same with colours (FORCE_COLOR at a terminal): matched without the escape codes", () => {
  const dim = (l) => `\x1b[2m${l}\x1b[22m`;
  const coloured = captured.map((l) => (/^\s+at |Connection status|Your Worker/.test(l) ? dim(l) : l));
  const kept = run(coloured);
  assert.equal(kept.filter((l) => l.includes("Your Worker has access")).length, 1);
  assert.ok(!kept.some((l) => /ENOTFOUND|Request\.cf|\s+at |Connection status updated/.test(l)));
});

test("a request log line or an error after a table is never dropped", () => {
  const filter = quietOutputFilter();
  const lines = [
    "Your Worker has access to the following bindings:",
    "env.DB (edge-platform)   D1 Database   local",
    "",
    "[wrangler:error] Error: boom",
    "    at handler (src/index.ts:1:1)",
  ];
  assert.deepEqual(lines.map(filter), lines);
});
