// A tiny local HTTP(S) receiver for the end-to-end checks: listens on 127.0.0.1 on a random port,
// records every request (method, path, headers, raw body) and answers a configurable status.
// When `secret` is set, each request's Standard Webhooks signature is checked on arrival and the
// result is recorded as `verified`. Also: a throw-away CA and server certificate for an https
// receiver (push endpoints must be https), trusted by `wrangler dev` through NODE_EXTRA_CA_CERTS.
import { spawnSync } from "node:child_process";
import { createHmac, timingSafeEqual } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { join } from "node:path";
import { eventually } from "./http.mjs";

/**
 * Verifies Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`)
 * over the raw body with a `whsec_` secret. Returns null when valid, else the reason.
 */
export function standardWebhookProblem(secret, headers, rawBody) {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (!id || !timestamp || !signatures) return "missing webhook-id, webhook-timestamp or webhook-signature";
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return `stale or malformed webhook-timestamp ${timestamp}`;
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = Buffer.from(`v1,${createHmac("sha256", key).update(`${id}.${timestamp}.`).update(rawBody).digest("base64")}`);
  const ok = signatures.split(" ").some((s) => s.length === expected.length && timingSafeEqual(Buffer.from(s), expected));
  return ok ? null : `no signature in "${signatures}" matches`;
}

/**
 * Starts a receiver. Options: `status` (number, or `(request) => number`), `secret` (whsec_),
 * `tls` ({key, cert} for https). Returns { url, requests, status, secret, waitFor(), close() };
 * `status` and `secret` can be changed while it runs.
 */
export async function startReceiver({ status = 200, secret = null, tls = null } = {}) {
  const requests = [];
  const receiver = {
    url: "",
    requests,
    status,
    secret,
    /** Waits for a recorded request matching `predicate` (default: any); returns it. */
    waitFor(predicate = () => true, { timeoutMs = 20_000 } = {}) {
      return eventually(
        () => requests.find(predicate) ?? Promise.reject(new Error(`no matching request yet; received ${requests.length}: ${summary(requests)}`)),
        { timeoutMs },
      );
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
  const handler = (req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const record = { method: req.method, path: req.url, headers: req.headers, body, text: body.toString("utf8"), verified: null, problem: null };
      if (receiver.secret) {
        record.problem = standardWebhookProblem(receiver.secret, req.headers, body);
        record.verified = record.problem === null;
      }
      requests.push(record);
      const code = typeof receiver.status === "function" ? receiver.status(record) : receiver.status;
      res.writeHead(record.verified === false ? 400 : code, { "content-type": "text/plain" });
      res.end(record.verified === false ? `bad signature: ${record.problem}` : "ok");
    });
  };
  const server = tls ? createHttpsServer({ key: tls.key, cert: tls.cert }, handler) : createHttpServer(handler);
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  receiver.url = `${tls ? "https" : "http"}://127.0.0.1:${server.address().port}`;
  return receiver;
}

function summary(requests) {
  return JSON.stringify(
    requests.slice(-3).map((r) => ({ method: r.method, path: r.path, verified: r.verified, problem: r.problem, body: r.text.slice(0, 200) })),
  );
}

/** Starts a receiver, runs `fn(receiver)` and closes the receiver whatever happens. */
export async function withReceiver(options, fn) {
  const receiver = await startReceiver(options);
  try {
    return await fn(receiver);
  } finally {
    await receiver.close();
  }
}

/**
 * Creates a throw-away CA and a server certificate for 127.0.0.1 in `dir` with the openssl CLI.
 * Returns { caFile, key, cert } or null (with a warning) when openssl is not available.
 */
export function createTlsMaterial(dir) {
  const run = (args) => {
    const result = spawnSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    if (result.error || result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.error?.message ?? result.stderr}`);
  };
  try {
    writeFileSync(join(dir, "leaf.ext"), "subjectAltName=IP:127.0.0.1,DNS:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n");
    run([
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "2",
      "-subj",
      "/CN=edge-platform e2e CA",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    run(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1"]);
    run(["x509", "-req", "-in", "leaf.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "leaf.crt", "-days", "2", "-extfile", "leaf.ext"]);
    return { caFile: join(dir, "ca.crt"), key: readFileSync(join(dir, "leaf.key")), cert: readFileSync(join(dir, "leaf.crt")) };
  } catch (error) {
    console.log(`warning: no local TLS material (${error.message}); https receivers are unavailable`);
    return null;
  }
}
