// Forms (issue 40): posts/s accepted at `POST /f/:id` (a browser's urlencoded form of 10 fields,
// answered 303) against the bare one-D1-read route of the bench Worker (`/__bench/bare/read`), at
// 16 and 64 connections (goals: ≥ 0.7× and ≥ 0.85×); and a 10 MB multipart upload to a form that
// takes 1 KB of files, refused 413 before the body is sent to its end (the bytes written when the
// answer arrived are reported). A new client IP every FORMS_POSTS_PER_IP posts (10: the form's cap
// per client network and minute, so neither it nor the per-IP `public` bucket refuses the run); the
// team is on enterprise (no monthly cap). With a new address for every post (FORMS_POSTS_PER_IP=1)
// each post also creates the rate-limiter Durable Object of its address, its SQLite file included:
// under wrangler dev, one process on one disk, that creation is most of the post's cost
// (docs/BENCHMARKS.md). Asserts every post was accepted and stored (the inbox count).
import { request as httpRequest } from "node:http";
import { api, loadTwin } from "../lib.mjs";

const connectionSets = (process.env.CONNECTION_SETS ?? "16,64").split(",").map(Number);
const GOALS = { 16: 0.7, 64: 0.85 };
const UPLOAD_BYTES = 10 * 1024 * 1024;

/** A distinct client IP per post (10.0.0.0/8 holds 16 M). */
const POSTS_PER_IP = Number(process.env.FORMS_POSTS_PER_IP ?? 10);
const ipOf = (post) => {
  const n = Math.floor(post / POSTS_PER_IP);
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};

const body = new URLSearchParams(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`field${i}`, `value number ${i} of the bench form`]))).toString();

/** Sends a multipart body of `total` bytes in 64 KB writes, one a millisecond; resolves with the status and the bytes written when the answer came. */
function upload(target, total) {
  return new Promise((resolve, reject) => {
    const boundary = "benchboundary";
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="cv"; filename="big.bin"\r\n\r\n`);
    let written = 0;
    let answered = null;
    const req = httpRequest(
      target,
      {
        method: "POST",
        headers: { "content-type": `multipart/form-data; boundary=${boundary}`, accept: "application/json", "cf-connecting-ip": "10.255.255.254" },
      },
      (res) => {
        answered = { status: res.statusCode, writtenWhenAnswered: written };
        res.resume();
        res.on("end", () => resolve(answered));
      },
    );
    // The server answers 413 and closes while the body is still being sent: the socket may be reset
    // before the answer is read (the kernel drops unread bytes on a reset). That is a refusal too,
    // reported as such with the bytes written; the caller tries again to read the 413 itself.
    req.on("error", (error) => {
      if (answered) return resolve(answered);
      if (error.code === "ECONNRESET" || error.code === "EPIPE") return resolve({ status: "reset", writtenWhenAnswered: written });
      reject(error);
    });
    req.write(head);
    written += head.length;
    const chunk = Buffer.alloc(64 * 1024);
    // Paced, one write a millisecond (about 64 MB/s, a fast uplink): unpaced, the local socket takes
    // the whole 10 MB before any answer can come back, so the bytes written would say nothing of
    // when the server answered.
    const pump = () => {
      if (answered || written >= total) return req.end(answered ? undefined : `\r\n--${boundary}--\r\n`);
      written += chunk.length;
      if (req.write(chunk)) setTimeout(pump, 1);
      else req.once("drain", () => setTimeout(pump, 1));
    };
    pump();
  });
}

export default {
  name: "forms",
  async run({ url, createTeamWithKey, load, median, rounds, duration }) {
    const team = await createTeamWithKey({ plan: "enterprise", scopes: ["forms:read", "forms:write"] });
    const form = await api(url, "POST", "forms", team.key, { name: "bench" });
    const small = await api(url, "POST", "forms", team.key, { name: "bench-upload", files: { enabled: true, max_bytes: 1024 } });
    // The upload first, on a quiet server: right after a load run, `wrangler dev`'s own proxy in
    // front of the Worker still drains the run's connections and, seen here, cuts the upload with
    // resets and 500s "Network connection lost" while the Worker answers 413 every time.
    let refused;
    const tries = [];
    for (let attempt = 0; attempt < 5 && refused?.status !== 413; attempt++) {
      refused = await upload(`${url}/f/${small.id}`, UPLOAD_BYTES);
      tries.push(refused.status);
    }
    if (refused.status !== 413 && refused.status !== "reset") throw new Error(`the 10 MB upload answered ${refused.status}`);
    if (refused.writtenWhenAnswered >= UPLOAD_BYTES) throw new Error(`the 10 MB upload was read to its end (${tries.join(", ")})`);
    const uploadRow = {
      figure: "10 MB multipart upload to a form taking 1 KB of files",
      value: `${refused.status === 413 ? "413" : "connection closed"} after ${(refused.writtenWhenAnswered / 1024).toFixed(0)} KB sent (tries: ${tries.join(", ")})`,
      baseline: `${UPLOAD_BYTES / 1024} KB body`,
      ratio: `${((refused.writtenWhenAnswered / UPLOAD_BYTES) * 100).toFixed(1)}% sent`,
      goal: "refused before the end of the body",
      note: refused.writtenWhenAnswered < UPLOAD_BYTES ? "met" : "not met",
    };
    const postUrl = `${url}/f/${form.id}`;
    const bareUrl = `${url}/__bench/bare/read?team=${team.teamId ?? "bench"}`;
    let next = 0;
    let accepted = 0;
    let shapeNext = 0;
    /** The bench form's post, each from the client IP of `nextIp()`. */
    const postFrom = (nextIp) => ({
      method: "POST",
      setupRequest: (req) => ({
        ...req,
        body,
        headers: { ...req.headers, "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": ipOf(nextIp()) },
      }),
    });
    const post = {
      ...postFrom(() => next++),
      onResponse: (status) => {
        if (status === 303) accepted++;
      },
    };
    const shapePost = postFrom(() => shapeNext++);
    const rows = [];
    for (const connections of connectionSets) {
      const runs = { bare: [], shape: [], forms: [] };
      for (let i = 0; i < rounds; i++) {
        runs.bare.push(await load({ title: `bare read, ${connections}`, url: bareUrl, duration, connections }));
        // A post's shape without its work: the same bodies to the bare read (not a goal's yardstick).
        runs.shape.push(await loadTwin({ title: `bare read as a post, ${connections}`, url: bareUrl, duration, connections, requests: [shapePost] }));
        const run = await load({ title: `POST /f/:id, ${connections}`, url: postUrl, duration, connections, requests: [post] });
        const refused = Object.entries(run.statuses).filter(([code]) => code !== "303");
        if (refused.length) throw new Error(`answers other than 303 at /f/:id: ${JSON.stringify(run.statuses)}`);
        runs.forms.push(run);
      }
      const rps = (list) => median(list.map((r) => r.requestsPerSecond));
      const ratio = rps(runs.forms) / rps(runs.bare);
      rows.push({
        figure: `bare one-D1-read as a POST of the form's body, ${connections} connections, req/s`,
        value: rps(runs.shape).toFixed(0),
        baseline: `${rps(runs.bare).toFixed(0)} (bare one-D1-read route)`,
        ratio: `${(rps(runs.shape) / rps(runs.bare)).toFixed(2)}×`,
        goal: "",
        note: `the shape alone; the post is ${(rps(runs.forms) / rps(runs.shape)).toFixed(2)}× of it`,
      });
      rows.push({
        figure: `POST /f/:id (urlencoded, 10 fields), ${connections} connections, req/s`,
        value: rps(runs.forms).toFixed(0),
        baseline: `${rps(runs.bare).toFixed(0)} (bare one-D1-read route)`,
        ratio: `${ratio.toFixed(2)}×`,
        goal: `≥ ${GOALS[connections] ?? 0.7}×`,
        note: `${ratio >= (GOALS[connections] ?? 0.7) ? "met" : "not met"}; a client IP per ${POSTS_PER_IP} post(s); rounds ${runs.forms.map((r, i) => (r.requestsPerSecond / runs.bare[i].requestsPerSecond).toFixed(2)).join(", ")}`,
      });
    }
    // Every accepted post is in the inbox (the store counts them), and nothing more than was sent:
    // a run's end leaves up to one post per connection in flight, stored by the server but its 303
    // never read, so accepted ≤ stored ≤ sent and sent − accepted ≤ the connections of all runs.
    const sent = next;
    const inFlightAtMost = connectionSets.reduce((sum, c) => sum + c * rounds, 0);
    if (sent - accepted > inFlightAtMost) throw new Error(`sent ${sent} posts but read only ${accepted} 303s (more than ${inFlightAtMost} cut off)`);
    const stored = await api(url, "GET", `forms/${form.id}`, team.key);
    if (stored.submission_count < accepted || stored.submission_count > sent)
      throw new Error(`${accepted} posts answered 303 of ${sent} sent, but the inbox holds ${stored.submission_count}`);

    rows.push(uploadRow);
    return rows;
  },
};
