// A flooding client in its own process (so its load is not the measuring process's): POST /v1/jobs
// open loop at RATE per second for COUNT requests, then one JSON line on stdout: per status, the
// count, and the Retry-After values the 429s carried.
// Usage: tsx flood-client.ts <url> <key> <rate> <count>
import process from "node:process";

const [url, key, rateText, countText] = process.argv.slice(2);
const rate = Number(rateText);
const count = Number(countText);
const body = JSON.stringify({
  name: "flood",
  schedule: { delayMs: 3_600_000 },
  target: { url: "http://127.0.0.1:9/hook" },
});
const statuses: Record<string, number> = {};
const retryAfter = new Set<string>();
let missingRetryAfter = 0;

async function one(): Promise<void> {
  let status = "error";
  try {
    const r = await fetch(`${url}/v1/jobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body,
    });
    await r.arrayBuffer();
    status = String(r.status);
    if (r.status === 429) {
      const ra = r.headers.get("retry-after");
      if (ra) retryAfter.add(ra);
      else missingRetryAfter++;
    }
  } catch {}
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
process.stdout.write(
  `${JSON.stringify({ statuses, retryAfter: [...retryAfter], missingRetryAfter, sentMs: Math.round(sentMs) })}\n`,
);
