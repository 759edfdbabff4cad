// A TCP relay we control, put between a client (executor, API) and Postgres or Redis. cut() is what
// the client sees when the server goes away: every open connection is destroyed and the port stops
// listening (connects are refused, as with a stopped server) until restore() listens on it again.
// We never touch the shared Postgres/Redis themselves.
import { createServer, connect, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  /** `url` with its host:port replaced by the proxy's. */
  urlFor(url: string): string;
  cut(): void;
  restore(): Promise<void>;
  readonly isCut: boolean;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let down = false;
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
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
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
    get isCut() {
      return down;
    },
    async close() {
      for (const s of sockets) s.destroy();
      if (!down) await new Promise((res) => server.close(() => res(null)));
    },
  };
}
