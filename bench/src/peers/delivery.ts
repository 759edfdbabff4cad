// The delivery references for the webhooks scenario, all with 50 requests in flight against the same
// local target:
// - the delivery limit: a bare `undici.request` loop on one keep-alive Agent, one fixed body, no
//   signing;
// - the signed limit: the same loop, each request with its own body and the Standard Webhooks headers
//   Fairway sends (HMAC-SHA256 over `id.timestamp.body`), so the cost of signing is known;
// - raw durable delivery: the cheapest durable signed dispatcher — the raw SKIP LOCKED queue (raw.ts)
//   feeding signed requests, finished rows marked done in batches. No fairness, caps, leases, retries
//   or history: what a dispatcher that keeps its queue in this Postgres reaches on this machine. It
//   sends through the transport Fairway's executor uses (undici's dispatcher API), the cheapest client
//   here: a reference slowed by a costlier client would make Fairway look closer to it than it is.
import { createHmac } from "node:crypto";
import postgres from "postgres";
import { Agent, request } from "undici";
import { RunAbort } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import type { TimedWindow } from "../lib/scenario.ts";
import { rawClaim, rawComplete, rawSetup } from "./raw.ts";

export const IN_FLIGHT = 50;
/** Claim 500 rows whenever fewer than 300 are buffered, mark done after a 10 ms linger: the fastest
 *  of the batch sizes tried, so the reference is not handicapped by its tuning. */
const RAW_DELIVERY = { batch: 500, refillBelow: 300, lingerMs: 10 } as const;

const SECRET = Buffer.from("fairway-bench-secret-fairway-bench");

/** One delivery: `id` names it (the signed loop signs and sends it with its own body). */
export type Post = (agent: Agent, url: string, id: string) => Promise<void>;

/** The bare loop's delivery: the same body every time, no signing. */
export const postBare =
  (body: string): Post =>
  async (agent, url) => {
    const res = await request(url, {
      method: "POST",
      body,
      headers: { "content-type": "application/json" },
      dispatcher: agent,
    });
    await res.body.text();
  };

/** A signed request's body and headers, shaped as Fairway's (body fields, headers, signature). */
function signedRequest(id: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({
    id,
    jobId: "job_bench",
    jobName: "bench",
    scheduledFor: new Date().toISOString(),
    attempt: 1,
    payload: { hello: "world" },
  });
  const ts = Math.floor(Date.now() / 1000);
  const signature = "v1," + createHmac("sha256", SECRET).update(`${id}.${ts}.${body}`).digest("base64");
  return {
    body,
    headers: {
      "content-type": "application/json",
      "user-agent": "Fairway-Webhooks/1",
      "webhook-id": id,
      "webhook-timestamp": String(ts),
      "webhook-signature": signature,
    },
  };
}

/** One signed delivery through `undici.request` (the signed limit). */
export const postSigned: Post = async (agent, url, id) => {
  const { body, headers } = signedRequest(id);
  const res = await request(url, { method: "POST", body, dispatcher: agent, headers });
  await res.body.text();
};

const newAgent = () => new Agent({ connections: 128, keepAliveTimeout: 30_000 });

/** Deliveries/s of a loop of `post` (postBare or postSigned), after `warm` of its own. */
export async function deliveryLimit(
  url: string,
  n: number,
  warm: number,
  post: Post,
  window?: TimedWindow,
): Promise<number> {
  const agent = newAgent();
  const loop = async (count: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < count) await post(agent, url, `msg_${next++}`);
      }),
    );
  };
  try {
    await loop(warm);
    window?.start();
    const t0 = performance.now();
    await loop(n);
    window?.end();
    return (n / (performance.now() - t0)) * 1000;
  } finally {
    await agent.close();
  }
}

/** Deliveries/s of raw durable delivery over `warm + n` queued rows, timed from the `warm`-th row
 *  marked done to the last (as Fairway's are timed by settled triggers). */
export async function rawDelivery(
  dbUrl: string,
  url: string,
  n: number,
  warm: number,
  window?: TimedWindow,
): Promise<number> {
  await rawSetup(dbUrl, n + warm);
  const sql = postgres(dbUrl, { max: 2, onnotice: () => {}, prepare: true });
  const transport = createUndiciTransport({ allowPrivate: true });
  const buffer: string[] = [];
  const delivered: string[] = [];
  let claiming: Promise<void> | null = null;
  let marking: Promise<void> | null = null;
  let exhausted = false;
  let done = 0;
  let t0 = 0;
  let timedFrom = 0;
  const claimMore = () =>
    (claiming ??= (async () => {
      try {
        const rows = await rawClaim(sql, RAW_DELIVERY.batch);
        if (rows.length === 0) exhausted = true;
        for (const r of rows) buffer.push(r.id);
      } finally {
        claiming = null;
      }
    })());
  const markDone = async () => {
    await new Promise((r) => setTimeout(r, RAW_DELIVERY.lingerMs));
    while (delivered.length > 0) {
      const ids = delivered.splice(0, delivered.length);
      await rawComplete(sql, ids);
      done += ids.length;
      if (t0 === 0 && done >= warm) {
        window?.start();
        t0 = performance.now();
        timedFrom = done;
      }
    }
    marking = null;
  };
  const worker = async () => {
    for (;;) {
      // A failed claim rejects for the workers that wait on it (below), not as an unhandled rejection here.
      if (buffer.length < RAW_DELIVERY.refillBelow && !exhausted) claimMore().catch(() => {});
      const id = buffer.shift();
      if (id === undefined) {
        if (exhausted) return;
        await claiming;
        continue;
      }
      const { body, headers } = signedRequest(`raw_${id}`);
      const res = await transport({ url, method: "POST", headers, body, signal: new RunAbort() });
      if (res.status !== 200) throw new Error(`raw delivery: HTTP ${res.status}`);
      delivered.push(id);
      marking ??= markDone();
    }
  };
  try {
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    while (marking) await marking;
    window?.end();
    if (done !== n + warm) throw new Error(`raw delivery marked ${done} of ${n + warm} rows done`);
    return ((done - timedFrom) / (performance.now() - t0)) * 1000;
  } finally {
    await sql.end();
    await transport.close();
  }
}
