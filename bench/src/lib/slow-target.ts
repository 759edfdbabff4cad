// A local HTTP target answering after a fixed delay, for the fairness scenarios: /<tenant>/<ms> answers
// 200 after <ms> milliseconds. It records the order in which requests arrived (by tenant) and each
// tenant's requests open at once, so a scenario can read a tenant's in-flight count as its receiver
// sees it, not as the scheduler reports it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface SlowTarget {
  /** Base URL: a job's target is `${url}/${tenantId}/${delayMs}`. */
  url: string;
  /** Tenant of each request, in arrival order. */
  arrivals: string[];
  /** Requests answered so far. */
  answered: number;
  /** Requests of each tenant being answered now. */
  open: Map<string, number>;
  close(): Promise<void>;
}

export async function startSlowTarget(): Promise<SlowTarget> {
  const t: SlowTarget = { url: "", arrivals: [], answered: 0, open: new Map(), close: async () => {} };
  const server: Server = createServer((req, res) => {
    const [, tenant = "", ms = "0"] = (req.url ?? "/").split("/");
    t.arrivals.push(tenant);
    t.open.set(tenant, (t.open.get(tenant) ?? 0) + 1);
    req.resume();
    req.on("end", () => {
      setTimeout(() => {
        t.open.set(tenant, t.open.get(tenant)! - 1);
        t.answered++;
        res.writeHead(200, { "content-type": "text/plain", "content-length": "2" }).end("ok");
      }, Number(ms));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  t.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.close = () =>
    new Promise((done) => {
      server.closeAllConnections();
      server.close(() => done());
    });
  return t;
}
