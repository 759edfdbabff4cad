// A TCP relay we control, put between a client (executor, API) and Postgres or Redis. cut() is what
// the client sees when the server goes away: every open connection is destroyed and the port stops
// listening (connects are refused, as with a stopped server) until restore() listens on it again.
// loseAnswer() is a COMMIT whose answer never comes back: Postgres gets the whole transaction and
// commits it, and the client's connection is cut before it hears so (a failover, a network fault).
// freeze() is a connection that dies without a close (a half-open TCP connection, a socket lost mid-write):
// every connection open at that moment passes nothing more either way and is never closed, while new
// connections pass as usual. We never touch the shared Postgres/Redis themselves.
import { createServer, connect, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  /** `url` with its host:port replaced by the proxy's. */
  urlFor(url: string): string;
  cut(): void;
  restore(): Promise<void>;
  readonly isCut: boolean;
  /** Once: the first transaction whose statements, as sent, satisfy `match` (a statement's text is
   *  sent the first time a connection prepares it; `before` is what the same connection sent before,
   *  its last megabyte) is passed to Postgres up to its COMMIT, and its connection cut before the
   *  answer comes back. Resolves when that happened. */
  loseAnswer(match: (sent: string, before: string) => boolean): Promise<void>;
  /** Every connection open now goes silent for good (no data, no close); new ones pass. */
  freeze(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let down = false;
  let trap: { match: (sent: string, before: string) => boolean; sprung: () => void } | null = null;
  const freezes = new Set<() => void>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  const server = createServer((client) => {
    track(client);
    if (down) return void client.destroy();
    const upstream = connect(target.port, target.host);
    track(upstream);
    upstream.pipe(client);
    // Client to server by hand, to see what is sent: what this connection sent since its last COMMIT
    // (protocol bytes read as latin1: the SQL text is plain within them), held only while a trap is set.
    let since = "";
    let before = "";
    let holding = false;
    let frozen = false;
    const freeze = () => {
      frozen = true;
      upstream.unpipe(client);
      upstream.pause();
    };
    freezes.add(freeze);
    client.on("close", () => freezes.delete(freeze));
    client.on("data", (chunk: Buffer) => {
      if (frozen) return;
      upstream.write(chunk);
      if (!trap) return;
      const sent = chunk.toString("latin1");
      since += sent;
      if (!sent.includes("commit")) return;
      const matched = trap.match(since, before);
      before = (before + since).slice(-1_000_000);
      since = "";
      if (matched) {
        const sprung = trap.sprung;
        trap = null;
        holding = true;
        upstream.unpipe(client);
        client.destroy();
        // Postgres has the COMMIT; a moment to run it before its connection goes too.
        setTimeout(() => upstream.destroy(), 1000);
        sprung();
      }
    });
    client.on("close", () => holding || upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  const listen = (p: number) =>
    new Promise<void>((res, rej) => server.once("error", rej).listen(p, "127.0.0.1", () => res()));
  await listen(0);
  const port = (server.address() as { port: number }).port;
  return {
    port,
    urlFor(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    cut() {
      down = true;
      server.close();
      for (const s of sockets) s.destroy();
    },
    async restore() {
      await listen(port);
      down = false;
    },
    loseAnswer(match) {
      return new Promise<void>((sprung) => (trap = { match, sprung }));
    },
    freeze() {
      for (const f of freezes) f();
      freezes.clear();
    },
    get isCut() {
      return down;
    },
    async close() {
      for (const s of sockets) s.destroy();
      if (!down) await new Promise((res) => server.close(() => res(null)));
    },
  };
}
