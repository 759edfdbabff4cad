// What the live fairness tests share: a test database, a receiver, and executors wired like the
// server's default (one in-process coordinator for wake-ups and the ready index, the undici
// transport), each test's executors stopped after it.
import { afterAll, afterEach, beforeAll } from "vitest";
import { createMemoryCoordinator } from "@fairway/coord";
import { Executor, type ExecutorOptions } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import type { Db } from "@fairway/store";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { useTestDb } from "../support/use-db.ts";

type Tuning = Omit<ExecutorOptions, "db" | "transport" | "wake" | "readyIndex">;

export function useLiveExecutors(): {
  readonly db: Db;
  readonly receiver: Receiver;
  /** Starts `count` executors sharing one coordinator. */
  start(count: number, tuning?: Tuning): void;
} {
  const testDb = useTestDb();
  let receiver: Receiver | undefined;
  const stops: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });
  afterAll(async () => {
    await receiver?.close();
  });
  return {
    get db() {
      return testDb.db;
    },
    get receiver() {
      if (!receiver) throw new Error("the receiver exists only inside tests and hooks");
      return receiver;
    },
    start(count, tuning = {}) {
      const coordinator = createMemoryCoordinator();
      for (let i = 0; i < count; i++) {
        const transport = createUndiciTransport({ allowPrivate: true });
        const e = new Executor({
          db: testDb.db,
          transport,
          allowPrivateTargets: true,
          wake: coordinator,
          readyIndex: coordinator,
          ...tuning,
        }).start();
        stops.push(async () => {
          await e.stop(5_000);
          await transport.close();
        });
      }
    },
  };
}
