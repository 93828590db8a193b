// `npm run deploy:setup` against a fake wrangler (scripts/test/fixtures/fake-wrangler.mjs): what
// it creates, what it writes into wrangler.toml, that a second run changes nothing, that failures
// stop it, and that the real wrangler accepts the written [env.production] for a deploy; and the
// bundle budget check of CI (scripts/check-bundle.mjs) failing over its budget.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, beforeEach, describe, test } from "node:test";
import { ROOT } from "../lib/dev-server.mjs";

const FAKE = join(ROOT, "scripts", "test", "fixtures", "fake-wrangler.mjs");
const QUEUES = ["report-export", "webhook-deliveries", "push-sends", "mail-sends", "alert-notifications", "survey-webhooks", "log-alert-checks", "platform-dlq"];
const APP_URL = "https://api.example.net";

const tmp = mkdtempSync(join(tmpdir(), "edge-deploy-setup-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

let work;
let config;
beforeEach(() => {
  work = mkdtempSync(join(tmp, "run-"));
  mkdirSync(join(work, "fake"));
  config = join(work, "wrangler.toml");
  copyFileSync(join(ROOT, "wrangler.toml"), config);
});

function setup(args = ["--app-url", APP_URL], env = {}) {
  const result = spawnSync(process.execPath, [join(ROOT, "scripts", "deploy-setup.mjs"), "--config", config, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, WRANGLER_BIN: FAKE, FAKE_WRANGLER_DIR: join(work, "fake"), ...env },
  });
  return { status: result.status, output: result.stdout + result.stderr };
}
const calls = () => {
  try {
    return readFileSync(join(work, "fake", "calls.jsonl"), "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l).join(" "));
  } catch {
    return [];
  }
};
const account = () => JSON.parse(readFileSync(join(work, "fake", "state.json"), "utf8"));
const section = (text) => text.slice(text.indexOf("# >>> deploy:setup"));

describe("a first run on an empty account", () => {
  test("creates the database, the bucket and every queue, writes [env.production], migrates remotely, lists the secrets", () => {
    const before = readFileSync(config, "utf8");
    const run = setup();
    assert.equal(run.status, 0, run.output);
    assert.deepEqual(calls(), [
      "d1 list --json",
      "d1 create edge-platform",
      "r2 bucket create edge-platform-reports",
      ...QUEUES.map((q) => `queues create ${q}`),
      `d1 migrations apply DB --remote --env production --config ${config}`,
    ]);
    const { d1, r2, queues } = account();
    assert.deepEqual([d1.map((db) => db.name), r2, queues], [["edge-platform"], ["edge-platform-reports"], QUEUES]);

    const after = readFileSync(config, "utf8");
    assert.ok(after.startsWith(before.trimEnd()), "the top-level config is kept as it was");
    const env = section(after);
    assert.match(env, /^\[env\.production\]$/m);
    assert.match(env, new RegExp(`\\[\\[env\\.production\\.d1_databases\\]\\]\\nbinding = "DB"\\ndatabase_name = "edge-platform"\\ndatabase_id = "${d1[0].uuid}"\\nmigrations_dir = "migrations"`));
    assert.doesNotMatch(env, /00000000-0000-0000-0000-000000000000/);
    assert.match(env, /APP_URL = "https:\/\/api\.example\.net"/);
    assert.match(env, /ALLOW_PRIVATE_TARGETS = "false"/);
    assert.match(env, /\[\[env\.production\.durable_objects\.bindings\]\]\nname = "RATE_LIMITER"\nclass_name = "RateLimiter"/);
    assert.match(env, /\[\[env\.production\.r2_buckets\]\]\nbinding = "REPORTS"\nbucket_name = "edge-platform-reports"/);
    assert.match(env, /\[\[env\.production\.durable_objects\.bindings\]\]\nname = "LOG_STORE"\nclass_name = "LogStore"/);
    assert.equal(env.match(/\[\[env\.production\.queues\.producers\]\]/g).length, 7);
    assert.equal(env.match(/\[\[env\.production\.queues\.consumers\]\]/g).length, 8);
    assert.match(env, /queue = "webhook-deliveries"\nmax_batch_size = 25\nmax_batch_timeout = 1\nmax_retries = 10\ndead_letter_queue = "platform-dlq"/);

    for (const secret of ["ADMIN_TOKEN", "ENCRYPTION_KEY", "SIGNING_KEY"]) assert.match(run.output, new RegExp(`wrangler secret put ${secret} --env production`));
    assert.doesNotMatch(run.output, /MAIL_HTTP_TOKEN/, "only with MAIL_TRANSPORT=http");
  });
});

describe("idempotency", () => {
  test("a second run creates nothing, tolerates 'already exists', and leaves wrangler.toml byte for byte as the first run wrote it", () => {
    assert.equal(setup().status, 0);
    const first = readFileSync(config, "utf8");
    const uuid = account().d1[0].uuid;
    writeFileSync(join(work, "fake", "calls.jsonl"), "");

    // No --app-url: the one of the first run is kept.
    const again = setup([]);
    assert.equal(again.status, 0, again.output);
    // The bucket and queues were asked for again and answered "already exists": not fatal.
    assert.ok(calls().includes("r2 bucket create edge-platform-reports") && calls().includes("queues create platform-dlq"));
    assert.match(again.output, /R2 bucket edge-platform-reports: exists/);
    assert.match(again.output, /queue platform-dlq: exists/);
    assert.match(again.output, /D1 database edge-platform: exists/);
    assert.ok(!calls().some((c) => c.startsWith("d1 create")), "no second database");
    assert.equal(account().d1.length, 1);
    assert.equal(readFileSync(config, "utf8"), first);
    assert.equal(account().d1[0].uuid, uuid);
  });

  test("a database that already exists on the account is used, not created", () => {
    writeFileSync(join(work, "fake", "state.json"), JSON.stringify({ d1: [{ name: "edge-platform", uuid: "6f0c1c36-3a55-4a8e-9d59-7c1d2b1e4f00" }], r2: [], queues: [] }));
    const run = setup();
    assert.equal(run.status, 0, run.output);
    assert.ok(!calls().some((c) => c.startsWith("d1 create")));
    assert.match(readFileSync(config, "utf8"), /database_id = "6f0c1c36-3a55-4a8e-9d59-7c1d2b1e4f00"/);
  });

  test("a new APP_URL on a later run replaces the old one inside the generated section only", () => {
    assert.equal(setup().status, 0);
    assert.equal(setup(["--app-url", "https://edge.example.org/"]).status, 0);
    const text = readFileSync(config, "utf8");
    assert.equal(text.match(/# >>> deploy:setup/g).length, 1);
    assert.match(section(text), /APP_URL = "https:\/\/edge\.example\.org"/);
    assert.match(text, /^APP_URL = "http:\/\/localhost:8787"$/m, "the local default is untouched");
  });
});

describe("refusals and failures", () => {
  test("without APP_URL on a first run, or with a non-https one, nothing is called and nothing written", () => {
    const before = readFileSync(config, "utf8");
    for (const args of [[], ["--app-url", "http://api.example.net"], ["--app-url", "not a url"]]) {
      const run = setup(args);
      assert.equal(run.status, 1);
      assert.match(run.output, /deploy:setup: APP_URL/);
    }
    assert.deepEqual(calls(), []);
    assert.equal(readFileSync(config, "utf8"), before);
  });

  test("a wrangler error other than 'already exists' stops the run with wrangler's message, before wrangler.toml is touched", () => {
    const before = readFileSync(config, "utf8");
    const run = setup(undefined, { FAKE_WRANGLER_FAIL: "queues create push-sends" });
    assert.equal(run.status, 1);
    assert.match(run.output, /wrangler queues create push-sends failed/);
    assert.match(run.output, /CLOUDFLARE_API_TOKEN/);
    assert.equal(readFileSync(config, "utf8"), before);
    assert.ok(!calls().some((c) => c.includes("migrations")));
  });

  test("a failed remote migration fails the run (the section is written, so a re-run only migrates)", () => {
    const run = setup(undefined, { FAKE_WRANGLER_FAIL: "migrations apply" });
    assert.equal(run.status, 1);
    assert.match(run.output, /migrations apply --remote failed/);
    writeFileSync(join(work, "fake", "calls.jsonl"), "");
    assert.equal(setup([]).status, 0);
    assert.ok(calls().some((c) => c.startsWith("d1 migrations apply DB --remote --env production")));
  });

  test("an [env.production] written by hand is not overwritten", () => {
    writeFileSync(config, `${readFileSync(config, "utf8")}\n[env.production]\nname = "mine"\n`);
    const run = setup();
    assert.equal(run.status, 1);
    assert.match(run.output, /did not write/);
  });
});

test("the real wrangler accepts the written [env.production]: a dry-run deploy of it binds every resource with no inheritance warning", { timeout: 120_000 }, () => {
  assert.equal(setup().status, 0);
  // A root that sees the project's sources through links, with the written config.
  const root = join(work, "project");
  mkdirSync(root);
  for (const name of ["src", "node_modules", "migrations", "dist", "package.json", "tsconfig.json"]) symlinkSync(join(ROOT, name), join(root, name));
  copyFileSync(config, join(root, "wrangler.toml"));
  const dry = spawnSync(process.execPath, [join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js"), "deploy", "--dry-run", "--env", "production", "--outdir", join(work, "out")], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
  });
  const output = dry.stdout + dry.stderr;
  assert.equal(dry.status, 0, output);
  assert.doesNotMatch(output, /not inherited|exists at the top level, but not on/i, output);
  for (const expected of ["env.DB (edge-platform)", "env.REPORTS (edge-platform-reports)", "env.RATE_LIMITER (RateLimiter)", "env.WEBHOOK_QUEUE (webhook-deliveries)", 'env.APP_URL ("https://api.example.net")', 'env.ALLOW_PRIVATE_TARGETS ("false")']) {
    assert.ok(output.includes(expected), `dry-run output lacks ${expected}:\n${output}`);
  }
});

test("the bundle budget check measures the real build and fails over its budget", { timeout: 120_000 }, () => {
  const run = spawnSync(process.execPath, [join(ROOT, "scripts", "check-bundle.mjs"), "--budget", "100000"], { cwd: ROOT, encoding: "utf8" });
  const output = run.stdout + run.stderr;
  assert.equal(run.status, 1, output);
  const gzip = /gzip ([\d.]+) KB/.exec(output);
  assert.ok(gzip && Number(gzip[1]) > 100, output);
  assert.match(output, /over the 100\.0 KB budget/);
});
