// A real local webhook receiver for end-to-end tests. It verifies every delivery with the official
// `standardwebhooks` library and records it; its behaviour is chosen by path:
//   /ok            → 200
//   /flaky/N/key   → 500 for the first N deliveries of that key, then 200
//   /status/CODE   → always CODE (e.g. 400, 410, 503)
//   /slow/MS       → 200 after MS milliseconds
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { Webhook } from "standardwebhooks";

export interface Delivery {
  path: string;
  id: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  verified: boolean;
  at: number;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Requests being answered now, by path (a slow path's requests stay open for its delay). */
  open: Map<string, number>;
  /** Paths of requests whose connection the sender closed before the answer (a cut request). */
  cut: string[];
  /** Secrets used to verify; set after the tenant is created (several during a rotation). */
  secrets: string[];
  waitFor(pred: (d: Delivery[]) => boolean, timeoutMs?: number): Promise<Delivery[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const counts = new Map<string, number>();
  const open = new Map<string, number>();
  const r: Receiver = {
    url: "",
    deliveries,
    open,
    cut: [],
    secrets: [],
    async waitFor(pred, timeoutMs = 15_000) {
      const end = Date.now() + timeoutMs;
      while (!pred(deliveries)) {
        if (Date.now() > end)
          throw new Error(`receiver: condition not met within ${timeoutMs} ms (${deliveries.length} deliveries)`);
        await new Promise((res) => setTimeout(res, 25));
      }
      return deliveries;
    },
    close: () => new Promise((res) => server.close(() => res())),
  };
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", async () => {
      const headers = req.headers;
      const verified = r.secrets.some((s) => {
        try {
          new Webhook(s).verify(raw, headers as Record<string, string>);
          return true;
        } catch {
          return false;
        }
      });
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      const path = req.url ?? "/";
      deliveries.push({ path, id: String(headers["webhook-id"]), headers, body, verified, at: Date.now() });
      open.set(path, (open.get(path) ?? 0) + 1);
      res.once("close", () => {
        if (!res.writableEnded) r.cut.push(path);
      });
      const parts = path.split("/").filter(Boolean);
      let status = 200;
      if (parts[0] === "flaky") {
        const key = parts.slice(2).join("/");
        const n = (counts.get(key) ?? 0) + 1;
        counts.set(key, n);
        status = n <= Number(parts[1]) ? 500 : 200;
      } else if (parts[0] === "status") {
        status = Number(parts[1]);
      } else if (parts[0] === "slow") {
        await new Promise((res) => setTimeout(res, Number(parts[1])));
      }
      open.set(path, open.get(path)! - 1);
      res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : `status ${status}`);
    });
  });
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", () => res()));
  const addr = server.address();
  r.url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  return r;
}
