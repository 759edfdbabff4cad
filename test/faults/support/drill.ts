// The setup every fault drill shares: a fresh database and a webhook receiver for the file (or for each
// test, where one file drills several shapes), and afterwards no child process, receiver or database
// left behind. `db` and `receiver` are live bindings, assigned before each test runs.
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { Executor, type ExecutorOptions } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { createTestDb, type TestDb } from "../../support/pg.ts";
import { killAll } from "./children.ts";
import { startHookReceiver, type HookReceiver } from "./hook-receiver.ts";

export let db: TestDb;
export let receiver: HookReceiver;
/** Transports of the survivors a drill started: closed with the rest. */
const transports: Array<{ close(): Promise<void> }> = [];

export function useDrill(per: "file" | "test" = "file"): void {
  const [before, after] = per === "file" ? [beforeAll, afterAll] : [beforeEach, afterEach];
  before(async () => {
    db = await createTestDb();
    receiver = await startHookReceiver();
  });
  after(async () => {
    await killAll();
    await Promise.all(transports.splice(0).map((t) => t.close()));
    await receiver?.close();
    await db?.drop();
  });
}

/** An in-process executor for a drill (after a kill, the one that takes over): polls and reaps fast, so
 *  a drill finishes in seconds; its transport is closed with the drill. */
export function startSurvivor(extra: Partial<ExecutorOptions> = {}): Executor {
  const transport = createUndiciTransport({ allowPrivate: true });
  transports.push(transport);
  return new Executor({
    db: db.store.db,
    transport,
    allowPrivateTargets: true,
    pollMs: 20,
    reapEveryMs: 200,
    poolRefreshMs: 500,
    ...extra,
  }).start();
}
