// The setup every fault drill shares: a fresh database and a webhook receiver for the file, and
// afterwards no child process, receiver or database left behind. `db` and `receiver` are live bindings,
// assigned before the first test runs.
import { afterAll, beforeAll } from "vitest";
import { createTestDb, type TestDb } from "../../support/pg.ts";
import { killAll } from "./children.ts";
import { startHookReceiver, type HookReceiver } from "./hook-receiver.ts";

export let db: TestDb;
export let receiver: HookReceiver;

export function useDrill(): void {
  beforeAll(async () => {
    db = await createTestDb();
    receiver = await startHookReceiver();
  });
  afterAll(async () => {
    await killAll();
    await receiver?.close();
    await db?.drop();
  });
}
