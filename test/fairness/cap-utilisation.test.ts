// A cap is a ceiling, not a throttle: a capped tenant's freed slot is refilled by the settle that frees
// it (the claim runs in the settle's transaction: store hand-off.ts), not by the next poll. With an
// idle poll longer than the whole test, the tenant still works through its backlog at its cap, on one
// executor and on several, and never goes over it. The receiver is also sampled while the tenant has
// triggers left to start, after its first round: the share of samples that saw it at its cap is
// logged and held to a floor far above what polling reaches (docs/fairness.md gives the figures).
import { describe, expect, it } from "vitest";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { useLiveExecutors } from "./live-executors.ts";

const CAP = 5;
const DELAY_MS = 100;
const JOBS = 20 * CAP;

describe("a capped tenant keeps its cap busy", () => {
  const live = useLiveExecutors();

  it.each([1, 3])(
    "%i executor(s): every slot refilled by the settle, never over the cap",
    async (executors) => {
      const type = `cap${executors}`;
      const tenant = `capped-${executors}`;
      const path = `/slow/${DELAY_MS}/${tenant}`;
      await seedTenant(live.db, tenant, { maxInFlight: CAP });
      await seedPool(live.db, type, 20);
      await seedDue(live.db, tenant, JOBS, { type, target: { url: `${live.receiver.url}${path}` } });
      const arrived = () => live.receiver.deliveries.filter((d) => d.path === path).length;
      live.start(executors, { pollMs: 60_000 });
      let samples = 0;
      let atCap = 0;
      let most = 0;
      // Sampled from the first round's end until the last trigger has started.
      while (arrived() < CAP) await new Promise((r) => setTimeout(r, 2));
      const firstRoundEnds = Date.now() + DELAY_MS;
      while (arrived() < JOBS) {
        const open = live.receiver.open.get(path) ?? 0;
        most = Math.max(most, open);
        if (Date.now() > firstRoundEnds) {
          samples++;
          if (open === CAP) atCap++;
        }
        await new Promise((r) => setTimeout(r, 3));
      }
      console.info(`cap ${CAP}, ${executors} executor(s): at cap in ${atCap} of ${samples} samples`);
      expect(most).toBe(CAP);
      expect(samples).toBeGreaterThan(50);
      // Polling (the idle poll is 60 s here) would leave it at its cap in none of them.
      expect(atCap / samples).toBeGreaterThanOrEqual(0.4);
    },
    60_000,
  );
});
