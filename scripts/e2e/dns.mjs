// A local DNS-over-HTTPS resolver for the end-to-end run: the JSON API of Cloudflare's and Google's
// resolvers (`GET ?name=<name>&type=TXT`, `accept: application/dns-json`), answering TXT records
// from a map the checks fill in. `wrangler dev` is pointed at it with DNS_RESOLVER_URL, so domain
// verification is exercised over real HTTP without the internet.
import { createServer } from "node:http";

export async function startDohResolver() {
  const records = new Map();
  const asked = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const name = (url.searchParams.get("name") ?? "").toLowerCase();
    const type = url.searchParams.get("type");
    asked.push({ name, type, accept: req.headers.accept });
    const answer = type === "TXT" ? (records.get(name) ?? []).map((value) => ({ name: `${name}.`, type: 16, TTL: 60, data: JSON.stringify(value) })) : [];
    res.writeHead(200, { "content-type": "application/dns-json" });
    res.end(JSON.stringify({ Status: answer.length ? 0 : 3, TC: false, RD: true, RA: true, Question: [{ name: `${name}.`, type: 16 }], Answer: answer }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/dns-query`,
    records,
    asked,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
