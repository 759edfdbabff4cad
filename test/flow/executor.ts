// An executor in the test process on `db`, wired like the server's default (an in-process coordinator
// for wake-ups and the ready index, the API's when it shares one; the undici transport), polling every
// 50 ms. Returns its stop.
import { createMemoryCoordinator } from "@fairway/coord";
import { Executor } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import type { Db } from "@fairway/store";

export function startExecutor(db: Db, coordinator = createMemoryCoordinator()): () => Promise<void> {
  const transport = createUndiciTransport({ allowPrivate: true });
  const e = new Executor({
    db,
    transport,
    allowPrivateTargets: true,
    wake: coordinator,
    readyIndex: coordinator,
    pollMs: 50,
  }).start();
  return async () => {
    await e.stop(5_000);
    await transport.close();
  };
}
