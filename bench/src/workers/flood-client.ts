// A flooding client in its own process (so its load is not the measuring process's): POST /v1/jobs
// open loop at RATE per second for COUNT requests, then one JSON line on stdout: per status (or
// error:<code> for a request that got no answer), the count, and the Retry-After values the 429s carried. CONNECTIONS > 0: over that many keep-alive
// connections (an undici Agent, as an SDK or a proxy keeps them; what exceeds them waits in the
// client); 0: a connection for every request in flight (Node's fetch, whose pool has no bound).
// Used by the front-door scenario and test/fairness/front-door.test.ts.
// Usage: tsx flood-client.ts <url> <key> <rate> <count> [connections]
import process from "node:process";
import { Agent, request } from "undici";

const [url, key, rateText, countText, connectionsText] = process.argv.slice(2);
const rate = Number(rateText);
const count = Number(countText);
const connections = Number(connectionsText ?? 0);
const agent = connections > 0 ? new Agent({ connections, keepAliveTimeout: 30_000 }) : null;
const body = JSON.stringify({
  name: "flood",
  schedule: { delayMs: 3_600_000 },
  target: { url: "http://127.0.0.1:9/hook" },
});
const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
const statuses: Record<string, number> = {};
const retryAfter = new Set<string>();
let missingRetryAfter = 0;

async function send(): Promise<{ status: number; retryAfter: string | null }> {
  if (agent) {
    const r = await request(`${url}/v1/jobs`, { method: "POST", headers, body, dispatcher: agent });
    await r.body.arrayBuffer();
    const ra = r.headers["retry-after"];
    return { status: r.statusCode, retryAfter: typeof ra === "string" ? ra : null };
  }
  const r = await fetch(`${url}/v1/jobs`, { method: "POST", headers, body });
  await r.arrayBuffer();
  return { status: r.status, retryAfter: r.headers.get("retry-after") };
}

async function one(): Promise<void> {
  let status = "error";
  try {
    const r = await send();
    status = String(r.status);
    if (r.status === 429) {
      if (r.retryAfter) retryAfter.add(r.retryAfter);
      else missingRetryAfter++;
    }
  } catch (err) {
    // What failed, by its code (a refused or reset connection, a timeout): "error:<code>".
    const e = err as { code?: string; cause?: { code?: string }; name?: string };
    status = `error:${e.cause?.code ?? e.code ?? e.name ?? "unknown"}`;
  }
  statuses[status] = (statuses[status] ?? 0) + 1;
}

const all: Promise<void>[] = [];
const t0 = performance.now();
for (let i = 0; i < count; i++) {
  const wait = t0 + (i * 1000) / rate - performance.now();
  if (wait > 1) await new Promise((r) => setTimeout(r, wait));
  all.push(one());
}
const sentMs = performance.now() - t0;
await Promise.all(all);
await agent?.close();
process.stdout.write(
  `${JSON.stringify({ statuses, retryAfter: [...retryAfter], missingRetryAfter, sentMs: Math.round(sentMs) })}\n`,
);
