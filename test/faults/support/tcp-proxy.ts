// A TCP relay we control, put between a client (executor, API) and Postgres or Redis. cut() is what
// the client sees when the server goes away: every open connection is destroyed and new ones are
// refused (reset at once) until restore(). We never touch the shared Postgres/Redis themselves.
import { createServer, connect, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  /** `url` with its host:port replaced by the proxy's. */
  urlFor(url: string): string;
  cut(): void;
  restore(): void;
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
    if (down) return void client.resetAndDestroy();
    const upstream = connect(target.port, target.host);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", () => res()));
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
      for (const s of sockets) s.destroy();
    },
    restore() {
      down = false;
    },
    get isCut() {
      return down;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((res) => server.close(() => res(null)));
    },
  };
}
