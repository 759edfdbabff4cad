// The claimer's split of a pass's budget over tenants on a Citus cluster (Claimer.splitBudget): by
// weighted fair share from the slots the tenants' claims returned.
import { expect, it } from "vitest";
import type { ClaimedTrigger } from "@fairway/store";
import { Claimer, type ClaimerDeps } from "../src/claimer.ts";

const claimer = () => new Claimer({} as ClaimerDeps);
const learn = (c: Claimer, type: string, rows: Array<Pick<ClaimedTrigger, "tenantId" | "vt">>) =>
  (c as unknown as { learn(type: string, claimed: typeof rows): void }).learn(type, rows);

it("splits evenly among tenants it knows nothing of", () => {
  const split = claimer().splitBudget("work", 9, 0, ["a", "b", "c"]);
  expect([...split.values()]).toEqual([3, 3, 3]);
});

it("splits by the step between each tenant's slots (cost ÷ weight)", () => {
  const c = claimer();
  learn(c, "work", [
    { tenantId: "light", vt: 0 },
    { tenantId: "light", vt: 300 },
    { tenantId: "heavy", vt: 0 },
    { tenantId: "heavy", vt: 100 },
  ]);
  const split = c.splitBudget("work", 8, 0, ["light", "heavy"]);
  expect(split.get("heavy")! + split.get("light")!).toBe(8);
  expect(split.get("heavy")).toBeGreaterThan(split.get("light")!);
});

it("splits when every tenant's claims so far took one trigger each (no step known yet)", () => {
  const c = claimer();
  learn(c, "work", [
    { tenantId: "a", vt: 0 },
    { tenantId: "b", vt: 0 },
  ]);
  const split = c.splitBudget("work", 4, 0, ["a", "b"]);
  expect(split.get("a")! + split.get("b")!).toBe(4);
});
