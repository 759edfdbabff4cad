// An Upstash-REST-compatible front for a real Redis, so @upstash/redis is tested against Redis
// itself. Written from what @upstash/redis 1.39 sends and expects (pkg/http.ts):
//   POST /            body ["CMD", arg, …]          → {"result": …}  | 400 {"error": "ERR …"}
//   POST /pipeline    body [["CMD", …], …]          → [{"result"}|{"error"}, …]   (not atomic)
//   POST /multi-exec  body [["CMD", …], …]          → same, inside MULTI/EXEC      (EXECABORT → 400)
//   Authorization: Bearer <token> on EVERY route, else 401 {"error": "Unauthorized"}.
//   Upstash-Encoding: base64 → every string in the result is base64 (recursively in arrays; numbers
//     and null as they are). Exception, as the service: a top-level "OK" is sent as is — the client
//     special-cases exactly that, and a nested one must be encoded ("OK" is valid base64 for "8").
//   upstash-sync-token: answered with a counter (the client echoes it back for read-your-writes).
// Replies come from ioredis callBuffer, so binary-safe values round-trip. Path-style commands
// (GET /set/k/v) and SSE subscriptions are not implemented: the client does not need them.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";

export interface UpstashShim {
  url: string;
  token: string;
  close(): Promise<void>;
}

type Reply = Buffer | string | number | null | Error | Reply[];
type Outcome = { result: unknown } | { error: string };

// These would take over (or block) the one shared connection every request uses.
const UNSUPPORTED = new Set([
  "SUBSCRIBE",
  "PSUBSCRIBE",
  "SSUBSCRIBE",
  "MONITOR",
  "BLPOP",
  "BRPOP",
  "BLMOVE",
  "BZPOPMIN",
  "BZPOPMAX",
  "WAIT",
]);
const MAX_BODY_BYTES = 10 * 1024 * 1024;

export async function startUpstashShim(opts: { redisUrl: string; token: string; port?: number }): Promise<UpstashShim> {
  const redis = new Redis(opts.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on("error", () => {}); // surfaced per request as {"error"}
  await redis.connect();
  let syncToken = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => send(res, 500, { error: `ERR shim: ${message(err)}` }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (req.headers.authorization !== `Bearer ${opts.token}`) {
      req.resume(); // drain, so a keep-alive connection stays usable
      return send(res, 401, { error: "Unauthorized" });
    }
    const path = new URL(req.url ?? "/", "http://shim").pathname.replace(/\/+$/, "") || "/";
    if (req.method !== "POST" || !["/", "/pipeline", "/multi-exec"].includes(path)) {
      req.resume();
      return send(res, 404, { error: "ERR not found" });
    }
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch (err) {
      return send(res, 400, { error: `ERR bad request: ${message(err)}` });
    }
    const base64 = String(req.headers["upstash-encoding"] ?? "").toLowerCase() === "base64";
    res.setHeader("upstash-sync-token", String(++syncToken));

    if (path === "/") {
      const cmd = toCommand(body);
      if ("error" in cmd) return send(res, 400, cmd);
      try {
        return send(res, 200, { result: encodeTop((await redis.callBuffer(cmd.name, ...cmd.args)) as Reply, base64) });
      } catch (err) {
        return send(res, 400, { error: message(err) });
      }
    }

    if (!Array.isArray(body) || body.length === 0)
      return send(res, 400, { error: "ERR expected a non-empty array of commands" });
    const cmds = body.map(toCommand);
    const bad = cmds.find((c) => "error" in c);
    if (bad) return send(res, 400, bad);
    const batch = path === "/multi-exec" ? redis.multi() : redis.pipeline();
    for (const c of cmds as Array<{ name: string; args: string[] }>) batch.callBuffer(c.name, ...c.args);
    let replies: Array<[Error | null, unknown]> | null;
    try {
      replies = await batch.exec();
    } catch (err) {
      return send(res, 400, { error: message(err) }); // EXECABORT: a command was rejected while queueing
    }
    if (!replies) return send(res, 400, { error: "ERR transaction aborted" });
    const out: Outcome[] = replies.map(([err, reply]) =>
      err ? { error: err.message } : { result: encodeTop(reply as Reply, base64) },
    );
    return send(res, 200, out);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    token: opts.token,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      redis.disconnect();
    },
  };
}

/** JSON command → Redis arguments. The client sends numbers and booleans unquoted; Redis wants strings. */
function toCommand(raw: unknown): { name: string; args: string[] } | { error: string } {
  if (!Array.isArray(raw) || raw.length === 0 || typeof raw[0] !== "string")
    return { error: "ERR a command is a non-empty array starting with its name" };
  const name = raw[0];
  if (UNSUPPORTED.has(name.toUpperCase())) return { error: `ERR ${name} is not supported by the REST shim` };
  const args = raw
    .slice(1)
    .map((a) => (typeof a === "string" ? a : a === null ? "" : typeof a === "object" ? JSON.stringify(a) : String(a)));
  return { name, args };
}

function encodeTop(reply: Reply, base64: boolean): unknown {
  if (base64 && Buffer.isBuffer(reply) && reply.length === 2 && reply.toString("latin1") === "OK") return "OK";
  return encode(reply, base64);
}

function encode(reply: Reply, base64: boolean): unknown {
  if (Buffer.isBuffer(reply)) return reply.toString(base64 ? "base64" : "utf8");
  if (typeof reply === "string") return base64 ? Buffer.from(reply).toString("base64") : reply;
  if (Array.isArray(reply)) return reply.map((r) => encode(r, base64));
  if (reply instanceof Error) return null; // an error nested in an array (a Lua table): not representable
  return reply; // number or null
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error("body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: ServerResponse, status: number, body: unknown) {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
