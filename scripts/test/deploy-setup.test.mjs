// `npm run deploy:setup` against a fake wrangler (scripts/test/fixtures/fake-wrangler.mjs): what
// it creates, what it writes into wrangler.toml, the secrets it generates and puts (ADMIN_TOKEN
// printed once), mail never left on the outbox, that a second run changes nothing, that failures
// stop it, --dry-run, the login and questions at a real terminal (a pty from `script`), that the
// real wrangler accepts the written [env.production] for a deploy, and `npm run deploy`; and the
// bundle budget check of CI (scripts/check-bundle.mjs) failing over its budget.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, beforeEach, describe, test } from "node:test";
import { ROOT } from "../lib/dev-server.mjs";

const FAKE = join(ROOT, "scripts", "test", "fixtures", "fake-wrangler.mjs");
const QUEUES = [
  "report-export",
  "audit-scans",
  "webhook-deliveries",
  "push-sends",
  "mail-sends",
  "alert-notifications",
  "survey-webhooks",
  "log-alert-checks",
  "platform-dlq",
];
const APP_URL = "https://api.example.net";
// The operator's own mail domain (reserved names such as example.com are refused for mail).
const MAIL_FROM = "Acme Ops <no-reply@mail.acme-ops.io>";
const MAIL = ["--mail-from", MAIL_FROM, "--sandbox-domain", "sandbox.acme-ops.io"];

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

function setup(args = ["--app-url", APP_URL, ...MAIL], env = {}) {
  const result = spawnSync(process.execPath, [join(ROOT, "scripts", "deploy-setup.mjs"), "--config", config, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, MAIL_FROM: "", SANDBOX_DOMAIN: "", WRANGLER_BIN: FAKE, FAKE_WRANGLER_DIR: join(work, "fake"), ...env },
  });
  return { status: result.status, output: result.stdout + result.stderr };
}
const SECRET_CALLS = (cfg) => [
  `secret list --env production --config ${cfg} --format json`,
  ...["ADMIN_TOKEN", "ENCRYPTION_KEY", "SIGNING_KEY"].map((name) => `secret put ${name} --env production --config ${cfg}`),
];
const calls = () => {
  try {
    return readFileSync(join(work, "fake", "calls.jsonl"), "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).join(" "));
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
      "whoami",
      "d1 list --json",
      "d1 create edge-platform",
      "r2 bucket create edge-platform-reports",
      "r2 bucket create edge-platform-mail-bodies",
      "r2 bucket create edge-platform-form-files",
      ...QUEUES.map((q) => `queues create ${q}`),
      `d1 migrations apply DB --remote --env production --config ${config}`,
      ...SECRET_CALLS(config),
    ]);
    const { d1, r2, queues } = account();
    assert.deepEqual(
      [d1.map((db) => db.name), r2, queues],
      [["edge-platform"], ["edge-platform-reports", "edge-platform-mail-bodies", "edge-platform-form-files"], QUEUES],
    );

    const after = readFileSync(config, "utf8");
    assert.ok(after.startsWith(before.trimEnd()), "the top-level config is kept as it was");
    const env = section(after);
    assert.match(env, /^\[env\.production\]$/m);
    assert.match(
      env,
      new RegExp(
        `\\[\\[env\\.production\\.d1_databases\\]\\]\\nbinding = "DB"\\ndatabase_name = "edge-platform"\\ndatabase_id = "${d1[0].uuid}"\\nmigrations_dir = "migrations"`,
      ),
    );
    assert.doesNotMatch(env, /00000000-0000-0000-0000-000000000000/);
    assert.match(env, /APP_URL = "https:\/\/api\.example\.net"/);
    assert.match(env, /ALLOW_PRIVATE_TARGETS = "false"/);
    assert.match(env, /\[\[env\.production\.durable_objects\.bindings\]\]\nname = "RATE_LIMITER"\nclass_name = "RateLimiter"/);
    assert.match(env, /\[\[env\.production\.r2_buckets\]\]\nbinding = "REPORTS"\nbucket_name = "edge-platform-reports"/);
    assert.match(env, /\[\[env\.production\.r2_buckets\]\]\nbinding = "MAIL_BODIES"\nbucket_name = "edge-platform-mail-bodies"/);
    assert.match(env, /\[\[env\.production\.durable_objects\.bindings\]\]\nname = "LOG_STORE"\nclass_name = "LogStore"/);
    assert.equal(env.match(/\[\[env\.production\.queues\.producers\]\]/g).length, 8);
    assert.equal(env.match(/\[\[env\.production\.queues\.consumers\]\]/g).length, 9);
    assert.match(env, /queue = "webhook-deliveries"\nmax_batch_size = 25\nmax_batch_timeout = 1\nmax_retries = 10\ndead_letter_queue = "platform-dlq"/);

    // Secrets: generated, put, and only ADMIN_TOKEN printed (once, the value that was put).
    const put = account().secrets.production;
    assert.deepEqual(Object.keys(put), ["ADMIN_TOKEN", "ENCRYPTION_KEY", "SIGNING_KEY"]);
    for (const value of Object.values(put)) assert.equal(Buffer.from(value, "base64").length, 32);
    assert.equal(new Set(Object.values(put)).size, 3);
    assert.match(
      run.output,
      new RegExp(`ADMIN_TOKEN \\(the operator API's credential; shown this once[^\\n]*\\n\\n  ${put.ADMIN_TOKEN.replace(/[+/]/g, "\\$&")}\\n`),
    );
    assert.ok(!run.output.includes(put.ENCRYPTION_KEY) && !run.output.includes(put.SIGNING_KEY));
    assert.match(run.output, /npm run deploy/);
    assert.doesNotMatch(run.output, /MAIL_HTTP_TOKEN/, "only with a mail provider");

    // The operator's sending address and sandbox domain, never the local defaults' domain.
    assert.match(
      env,
      /^SANDBOX_DOMAIN = "sandbox\.acme-ops\.io"\n(?:SANDBOX_(?:HOURLY|DAILY)_CAP = "\d+"\n)*MAIL_FROM = "Acme Ops <no-reply@mail\.acme-ops\.io>"$/m,
    );
    assert.doesNotMatch(env, /edge-platform\.dev/);

    // No provider given: production mail is off, never the outbox, and the run says so loudly.
    assert.match(env, /MAIL_TRANSPORT = "off"\nMAIL_HTTP_URL = ""/);
    assert.doesNotMatch(env, /MAIL_TRANSPORT = "outbox"/);
    assert.match(run.output, /!!! NO MAIL WILL LEAVE THIS DEPLOYMENT !!!/);
  });

  test("--mail-url sends production mail through the provider and puts MAIL_HTTP_TOKEN from the environment", () => {
    const run = setup(["--app-url", APP_URL, ...MAIL, "--mail-url", "https://mail.example.net/v1/send"], { MAIL_HTTP_TOKEN: "provider-token-1" });
    assert.equal(run.status, 0, run.output);
    const env = section(readFileSync(config, "utf8"));
    assert.match(env, /MAIL_TRANSPORT = "http"\nMAIL_HTTP_URL = "https:\/\/mail\.example\.net\/v1\/send"/);
    assert.equal(account().secrets.production.MAIL_HTTP_TOKEN, "provider-token-1");
    assert.doesNotMatch(run.output, /NO MAIL WILL LEAVE/);
    assert.ok(!run.output.includes("provider-token-1"));
    // A later run keeps the provider without being told again.
    assert.equal(setup([]).status, 0);
    assert.match(section(readFileSync(config, "utf8")), /MAIL_TRANSPORT = "http"\nMAIL_HTTP_URL = "https:\/\/mail\.example\.net\/v1\/send"/);
  });

  test("a provider without a token in the environment (and nobody to ask) is configured, and the missing token is named", () => {
    const run = setup(["--app-url", APP_URL, ...MAIL, "--mail-url", "https://mail.example.net/v1/send"], { MAIL_HTTP_TOKEN: "" });
    assert.equal(run.status, 0, run.output);
    assert.equal(account().secrets.production.MAIL_HTTP_TOKEN, undefined);
    assert.match(run.output, /secret MAIL_HTTP_TOKEN is not set: put it with `npx wrangler secret put MAIL_HTTP_TOKEN --env production`/);
  });

  test("an http mail provider URL is refused", () => {
    const run = setup(["--app-url", APP_URL, ...MAIL, "--mail-url", "http://mail.example.net/send"]);
    assert.equal(run.status, 1);
    assert.match(run.output, /mail provider URL must be https/);
    assert.deepEqual(calls(), []);
  });
});

describe("--dry-run", () => {
  test("calls nothing, writes nothing, puts nothing, and prints every command it would run", () => {
    const before = readFileSync(config, "utf8");
    const run = setup(["--app-url", APP_URL, ...MAIL, "--dry-run"]);
    assert.equal(run.status, 0, run.output);
    assert.deepEqual(calls(), []);
    assert.equal(readFileSync(config, "utf8"), before);
    const printed = [...run.output.matchAll(/^would run: npx wrangler (.*?)(?: {3}\(.*)?$/gm)].map((m) => m[1]);
    assert.deepEqual(printed, [
      "whoami",
      "d1 list --json",
      "d1 create edge-platform",
      "r2 bucket create edge-platform-reports",
      "r2 bucket create edge-platform-mail-bodies",
      "r2 bucket create edge-platform-form-files",
      ...QUEUES.map((q) => `queues create ${q}`),
      `d1 migrations apply DB --remote --env production --config ${config}`,
      ...SECRET_CALLS(config),
    ]);
    assert.match(run.output, /would write \[env\.production\] to .*:\n# >>> deploy:setup/);
    assert.match(run.output, /database_id = "<id of edge-platform>"/);
    assert.doesNotMatch(run.output, /ADMIN_TOKEN \(the operator API's credential/);
    assert.match(run.output, /Dry run: nothing was created, written or put/);
  });
});

describe("login and questions", () => {
  test("logged out without a terminal: stops before anything, saying how to log in", () => {
    const run = setup(undefined, { FAKE_WRANGLER_LOGGED_OUT: "1" });
    assert.equal(run.status, 1);
    assert.match(run.output, /wrangler is not logged in: run `npx wrangler login` at a terminal, or set CLOUDFLARE_API_TOKEN/);
    assert.deepEqual(calls(), ["whoami"]);
  });

  test("at a terminal: runs wrangler's login, asks for APP_URL, the mail provider and its token", { timeout: 60_000 }, async () => {
    const command = [process.execPath, join(ROOT, "scripts", "deploy-setup.mjs"), "--config", config].map((a) => `'${a}'`).join(" ");
    const env = {
      ...process.env,
      WRANGLER_BIN: FAKE,
      FAKE_WRANGLER_DIR: join(work, "fake"),
      FAKE_WRANGLER_LOGGED_OUT: "1",
      MAIL_HTTP_TOKEN: "",
      MAIL_FROM: "",
      SANDBOX_DOMAIN: "",
    };
    delete env.CI;
    // `script` gives the set-up a real terminal (a pty); answers are typed when each question shows.
    const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: ROOT, env });
    const answers = [
      [/APP_URL\), e\.g\./, "https://api.example.net"],
      [/Mail provider URL/, "https://mail.example.net/v1/send"],
      [/MAIL_FROM\), on a domain you own/, "Acme <no-reply@acme-ops.io>"],
      // An empty answer takes the suggestion, a subdomain of MAIL_FROM's domain.
      [/SANDBOX_DOMAIN\), a domain you own \[sandbox\.acme-ops\.io\]/, ""],
      [/MAIL_HTTP_TOKEN \(your mail provider's API token\)/, "typed-token"],
    ];
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
      while (answers.length && answers[0][0].test(output)) child.stdin.write(`${answers.shift()[1]}\n`);
    });
    const status = await new Promise((done) => child.on("close", done));
    assert.equal(status, 0, output);
    assert.equal(answers.length, 0, `unanswered: ${answers.map((a) => a[0]).join(", ")}\n${output}`);
    assert.deepEqual(calls().slice(0, 2), ["whoami", "login"]);
    assert.equal(account().loggedIn, true);
    const text = readFileSync(config, "utf8");
    assert.match(section(text), /APP_URL = "https:\/\/api\.example\.net"/);
    assert.match(section(text), /MAIL_TRANSPORT = "http"/);
    assert.match(
      section(text),
      /^SANDBOX_DOMAIN = "sandbox\.acme-ops\.io"\n(?:SANDBOX_(?:HOURLY|DAILY)_CAP = "\d+"\n)*MAIL_FROM = "Acme <no-reply@acme-ops\.io>"$/m,
    );
    assert.equal(account().secrets.production.MAIL_HTTP_TOKEN, "typed-token");
    assert.ok(output.includes(account().secrets.production.ADMIN_TOKEN));
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
    // Secrets already set are kept, never rotated, and ADMIN_TOKEN is not shown again.
    assert.ok(!calls().some((c) => c.startsWith("secret put")), calls().join("\n"));
    assert.match(again.output, /secret ADMIN_TOKEN: already set \(kept\)/);
    assert.doesNotMatch(again.output, /shown this once/);
  });

  test("a database that already exists on the account is used, not created", () => {
    writeFileSync(
      join(work, "fake", "state.json"),
      JSON.stringify({ d1: [{ name: "edge-platform", uuid: "6f0c1c36-3a55-4a8e-9d59-7c1d2b1e4f00" }], r2: [], queues: [] }),
    );
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

describe("--help and wrong options", () => {
  test("--help (and -h) prints the usage with every option, calls nothing, and exits 0", () => {
    for (const flag of ["--help", "-h"]) {
      const run = setup([flag]);
      assert.equal(run.status, 0, run.output);
      assert.match(run.output, /^Usage: npm run deploy:setup -- \[options\]/);
      for (const option of ["--app-url", "--mail-from", "--sandbox-domain", "--mail-url", "--config", "--dry-run", "--help"]) {
        assert.ok(run.output.includes(option), option);
      }
      assert.doesNotMatch(run.output, /^\s+at /m, "no stack trace");
    }
    assert.deepEqual(calls(), []);
  });

  test("an unknown option names itself and shows the usage, without a stack trace", () => {
    const run = setup(["--app-ur", APP_URL]);
    assert.equal(run.status, 2);
    assert.match(run.output, /^deploy:setup: Unknown option '--app-ur'/);
    assert.match(run.output, /Usage: npm run deploy:setup/);
    assert.doesNotMatch(run.output, /^\s+at |TypeError/m);
    assert.deepEqual(calls(), []);
  });
});

describe("the sending address and the sandbox domain", () => {
  const refused = (args, env, pattern) => {
    const before = readFileSync(config, "utf8");
    const run = setup(["--app-url", APP_URL, ...args], env);
    assert.equal(run.status, 1, run.output);
    assert.match(run.output, pattern);
    assert.deepEqual(calls(), [], "nothing was called");
    assert.equal(readFileSync(config, "utf8"), before, "nothing was written");
  };

  test("are required on a first run without a terminal, naming the option", () => {
    refused([], {}, /deploy:setup: MAIL_FROM is required on the first run: .*--mail-from "Acme <no-reply@mail\.acme\.com>"/);
    refused(["--mail-from", MAIL_FROM], {}, /deploy:setup: SANDBOX_DOMAIN is required on the first run: .*--sandbox-domain sandbox\.acme\.com/);
    refused(["--dry-run"], {}, /MAIL_FROM is required/);
  });

  test("the local defaults' domain (wrangler.toml's top level) and reserved names are refused", () => {
    refused(
      ["--mail-from", "Edge Platform <no-reply@edge-platform.dev>", "--sandbox-domain", "sandbox.acme-ops.io"],
      {},
      /MAIL_FROM must be on a domain you own: edge-platform\.dev is the local default/,
    );
    refused(
      ["--mail-from", MAIL_FROM, "--sandbox-domain", "sandbox.edge-platform.dev"],
      {},
      /SANDBOX_DOMAIN must be a domain you own: sandbox\.edge-platform\.dev is the local default/,
    );
    refused(["--mail-from", "ops@mail.example.com", "--sandbox-domain", "sandbox.acme-ops.io"], {}, /mail\.example\.com is a reserved name/);
    refused(["--mail-from", MAIL_FROM, "--sandbox-domain", "sandbox.test"], {}, /sandbox\.test is a reserved name/);
    refused(["--mail-from", "two@acme-ops.io, three@acme-ops.io", ...MAIL.slice(2)], {}, /MAIL_FROM is not one email address/);
    refused(["--mail-from", MAIL_FROM, "--sandbox-domain", "mail.acme-ops.io"], {}, /SANDBOX_DOMAIN must differ from MAIL_FROM's domain/);
    refused(["--mail-from", MAIL_FROM, "--sandbox-domain", "not a domain"], {}, /not a domain name/);
  });

  test("come from MAIL_FROM and SANDBOX_DOMAIN in the environment, and are kept by a later run", () => {
    const run = setup(["--app-url", APP_URL], { MAIL_FROM: "Ops <ops@acme-ops.io>", SANDBOX_DOMAIN: "Sandbox.Acme-Ops.io" });
    assert.equal(run.status, 0, run.output);
    const first = readFileSync(config, "utf8");
    assert.match(
      section(first),
      /^SANDBOX_DOMAIN = "sandbox\.acme-ops\.io"\n(?:SANDBOX_(?:HOURLY|DAILY)_CAP = "\d+"\n)*MAIL_FROM = "Ops <ops@acme-ops\.io>"$/m,
    );
    assert.equal(setup([]).status, 0);
    assert.equal(readFileSync(config, "utf8"), first);
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

test("the real wrangler accepts the written [env.production]: a dry-run deploy of it binds every resource with no inheritance warning", {
  timeout: 120_000,
}, () => {
  assert.equal(setup().status, 0);
  // A root that sees the project's sources through links, with the written config.
  const root = join(work, "project");
  mkdirSync(root);
  for (const name of ["src", "node_modules", "migrations", "dist", "package.json", "tsconfig.json"]) symlinkSync(join(ROOT, name), join(root, name));
  copyFileSync(config, join(root, "wrangler.toml"));
  const dry = spawnSync(
    process.execPath,
    [join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js"), "deploy", "--dry-run", "--env", "production", "--outdir", join(work, "out")],
    {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    },
  );
  const output = dry.stdout + dry.stderr;
  assert.equal(dry.status, 0, output);
  assert.doesNotMatch(output, /not inherited|exists at the top level, but not on/i, output);
  for (const expected of [
    "env.DB (edge-platform)",
    "env.REPORTS (edge-platform-reports)",
    "env.MAIL_BODIES (edge-platform-mail-bodies)",
    "env.RATE_LIMITER (RateLimiter)",
    "env.WEBHOOK_QUEUE (webhook-deliveries)",
    'env.APP_URL ("https://api.example.net")',
    'env.ALLOW_PRIVATE_TARGETS ("false")',
  ]) {
    assert.ok(output.includes(expected), `dry-run output lacks ${expected}:\n${output}`);
  }
});

describe("npm run deploy", () => {
  const deploy = (env = {}) => {
    const result = spawnSync(process.execPath, [join(ROOT, "scripts", "deploy.mjs"), "--config", config, "--dry-run"], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, WRANGLER_BIN: FAKE, FAKE_WRANGLER_DIR: join(work, "fake"), ...env },
    });
    return { status: result.status, output: result.stdout + result.stderr };
  };

  test("refuses to deploy the top-level config before the set-up wrote [env.production]", () => {
    const run = deploy();
    assert.equal(run.status, 1);
    assert.match(run.output, /has no \[env\.production\] yet: run `npm run deploy:setup/);
    assert.deepEqual(calls(), []);
  });

  test("deploys the production environment once it exists, passing other options through", () => {
    assert.equal(setup().status, 0);
    writeFileSync(join(work, "fake", "calls.jsonl"), "");
    const run = deploy();
    assert.equal(run.status, 0, run.output);
    assert.deepEqual(calls(), [`deploy --env production --config ${config} --dry-run`]);
  });

  test("is what package.json's deploy script runs", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    assert.equal(pkg.scripts.deploy, "node scripts/deploy.mjs");
  });
});

test("the bundle budget check measures the real build and fails over its budget", { timeout: 120_000 }, () => {
  const run = spawnSync(process.execPath, [join(ROOT, "scripts", "check-bundle.mjs"), "--budget", "100000"], { cwd: ROOT, encoding: "utf8" });
  const output = run.stdout + run.stderr;
  assert.equal(run.status, 1, output);
  const gzip = /gzip ([\d.]+) KB/.exec(output);
  assert.ok(gzip && Number(gzip[1]) > 100, output);
  assert.match(output, /over the 100\.0 KB budget/);
});
