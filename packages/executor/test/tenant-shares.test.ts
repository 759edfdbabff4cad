// The per-tenant layout's split of a pass's budget over tenants (TenantShares.split): by weighted fair
// share from the slots the tenants' claims returned.
import { expect, it } from "vitest";
import { silentLogger } from "@fairway/core";
import type { ClaimedTrigger, Db } from "@fairway/store";
import { TenantShares } from "../src/tenant-shares.ts";

const shares = () => new TenantShares({} as Db, silentLogger);
const claimed = (s: TenantShares, type: string, rows: Array<Pick<ClaimedTrigger, "tenantId" | "vt">>) => {
  for (const tenantId of new Set(rows.map((r) => r.tenantId)))
    s.claimed(
      type,
      tenantId,
      { claimed: rows.filter((r) => r.tenantId === tenantId) as ClaimedTrigger[], busy: [] },
      0,
    );
};

it("splits evenly among tenants it knows nothing of", () => {
  const split = shares().split("work", 9, 0, ["a", "b", "c"]);
  expect([...split.values()]).toEqual([3, 3, 3]);
});

it("splits by the step between each tenant's slots (cost ÷ weight)", () => {
  const s = shares();
  claimed(s, "work", [
    { tenantId: "light", vt: 0 },
    { tenantId: "light", vt: 300 },
    { tenantId: "heavy", vt: 0 },
    { tenantId: "heavy", vt: 100 },
  ]);
  const split = s.split("work", 8, 0, ["light", "heavy"]);
  expect(split.get("heavy")! + split.get("light")!).toBe(8);
  expect(split.get("heavy")).toBeGreaterThan(split.get("light")!);
});

it("splits when every tenant's claims so far took one trigger each (no step known yet)", () => {
  const s = shares();
  claimed(s, "work", [
    { tenantId: "a", vt: 0 },
    { tenantId: "b", vt: 0 },
  ]);
  const split = s.split("work", 4, 0, ["a", "b"]);
  expect(split.get("a")! + split.get("b")!).toBe(4);
});

it("leaves out a moment a tenant whose claim got nothing, and one whose claim failed", () => {
  const s = shares();
  s.claimed("work", "empty", { claimed: [], busy: [] }, 0);
  s.failed("work", "down", 0);
  expect([...s.split("work", 4, 100, ["empty", "down", "ok"]).keys()]).toEqual(["ok"]);
  expect([...s.split("work", 4, 300, ["empty", "down", "ok"]).keys()].sort()).toEqual(["empty", "ok"]);
  expect([...s.split("work", 4, 1000, ["empty", "down", "ok"]).keys()].sort()).toEqual(["down", "empty", "ok"]);
});
