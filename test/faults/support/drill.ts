// The setup every fault drill shares: a fresh database and a webhook receiver for the file (or for each
// test, where one file drills several shapes), and afterwards no child process, receiver or database
// left behind. `db` and `receiver` are live bindings, assigned before each test runs.
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { createTestDb, type TestDb } from "../../support/pg.ts";
import { killAll } from "./children.ts";
import { startHookReceiver, type HookReceiver } from "./hook-receiver.ts";

export let db: TestDb;
export let receiver: HookReceiver;

export function useDrill(per: "file" | "test" = "file"): void {
  const [before, after] = per === "file" ? [beforeAll, afterAll] : [beforeEach, afterEach];
  before(async () => {
    db = await createTestDb();
    receiver = await startHookReceiver();
  });
  after(async () => {
    await killAll();
    await receiver?.close();
    await db?.drop();
  });
}
