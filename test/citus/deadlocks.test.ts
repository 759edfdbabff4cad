// Deadlock-free on a Citus cluster too: the mixed workload (support mixed-workload.ts) on the
// distributed layout, two workers, for half a minute. Citus reports a distributed deadlock by cancelling
// one transaction ("…involved in a distributed deadlock") and a worker's own as Postgres does; neither
// may appear in what any component logged or any call failed with.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Store } from "@fairway/store";
import { mixedWorkload } from "../support/mixed-workload.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { startCitusCluster, type CitusCluster } from "./support/cluster.ts";
import { distributedStore } from "./support/router.ts";

let cluster: CitusCluster;
let receiver: Receiver;
let store: Store;

beforeAll(async () => {
  cluster = await startCitusCluster(2);
  receiver = await startReceiver();
  store = await distributedStore(cluster, "deadlocks");
}, 120_000);
afterAll(async () => {
  await store?.close();
  await receiver?.close();
  await cluster?.stop();
});

it("a mixed workload on the distributed layout for half a minute: no deadlock", { timeout: 150_000 }, async () => {
  const r = await mixedWorkload(store.db, receiver, 30_000);
  console.log(JSON.stringify({ drill: "deadlocks", layout: "citus", ...r }));
  expect(r.deliveries).toBeGreaterThan(200);
  expect(r.deadlocks).toEqual([]);
});
