// A webhook receiver for fault drills. Unlike test/support/receiver.ts (behaviour by path), its
// behaviour is switched at run time by the test, because a drill changes the world mid-flight:
//   ok    → 200 after `delayMs`
//   hold  → keep every request open until release() (so an executor provably holds leases)
//   down  → 503 with `Retry-After: retryAfterSec` (the target is down)
// Every request is recorded on arrival with its `webhook-id`, so a duplicate is visible as the same id
// twice. It also tracks requests open per tenant (path /t/<tenant>) to check caps from the outside.
import { createServer, type ServerResponse } from "node:http";

export interface Hit {
  id: string;
  attempt: number;
  tenant: string;
  at: number;
  /** Status answered; null while held or if the caller went away. */
  status: number | null;
}

type Mode = { kind: "ok" } | { kind: "hold" } | { kind: "down"; retryAfterSec?: number };

export interface HookReceiver {
  url: string;
  hits: Hit[];
  mode: Mode;
  delayMs: number;
  /** Most requests ever open at once, per tenant. */
  maxOpen: Map<string, number>;
  readonly held: number;
  /** Requests open now (neither answered nor closed by the caller). */
  readonly open: number;
  /** Answer every held request with 200. */
  release(): void;
  waitFor(pred: (hits: Hit[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startHookReceiver(): Promise<HookReceiver> {
  const open = new Map<string, number>();
  const held: Array<() => void> = [];
  const r: HookReceiver = {
    url: "",
    hits: [],
    mode: { kind: "ok" },
    delayMs: 0,
    maxOpen: new Map(),
    get held() {
      return held.length;
    },
    get open() {
      let n = 0;
      for (const v of open.values()) n += v;
      return n;
    },
    release() {
      for (const answer of held.splice(0)) answer();
    },
    async waitFor(pred, timeoutMs = 20_000, what = "condition") {
      const end = Date.now() + timeoutMs;
      while (!pred(r.hits)) {
        if (Date.now() > end)
          throw new Error(`receiver: ${what} not met within ${timeoutMs} ms (${r.hits.length} hits)`);
        await new Promise((res) => setTimeout(res, 20));
      }
    },
    async close() {
      held.splice(0);
      server.closeAllConnections();
      await new Promise((res) => server.close(() => res(null)));
    },
  };

  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const tenant = (req.url ?? "").split("/")[2] ?? "";
      const hit: Hit = {
        id: String(req.headers["webhook-id"]),
        attempt: Number(req.headers["fairway-attempt"]),
        tenant,
        at: Date.now(),
        status: null,
      };
      r.hits.push(hit);
      const n = (open.get(tenant) ?? 0) + 1;
      open.set(tenant, n);
      r.maxOpen.set(tenant, Math.max(n, r.maxOpen.get(tenant) ?? 0));
      let finished = false;
      const finish = () => {
        if (!finished) open.set(tenant, (open.get(tenant) ?? 1) - 1);
        finished = true;
      };
      const answer = (status: number, headers: Record<string, string> = {}) => {
        if (finished || res.destroyed) return finish();
        finish();
        hit.status = status;
        reply(res, status, headers);
      };
      res.on("close", finish);
      const mode = r.mode;
      if (mode.kind === "hold") held.push(() => answer(200));
      else if (mode.kind === "down")
        answer(503, mode.retryAfterSec ? { "retry-after": String(mode.retryAfterSec) } : {});
      else if (r.delayMs > 0) setTimeout(() => answer(200), r.delayMs);
      else answer(200);
    });
  });
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", () => res()));
  const addr = server.address();
  r.url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  return r;
}

function reply(res: ServerResponse, status: number, headers: Record<string, string>) {
  res.writeHead(status, { "content-type": "text/plain", ...headers }).end(status < 300 ? "ok" : "down");
}
