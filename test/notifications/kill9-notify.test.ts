// `kill -9` an executor while it settles dead letters in batches: each batch's notifications are made
// in the settle's own transaction, so a batch that committed has its notifications, one that did not
// is reaped later (dead by lease_expired) and makes them then. Every dead letter is accounted for
// exactly once — a notification sent, or folded into one (or into the fold window still open) — and
// every notification reaches the channel at least once, under its own webhook-id.
import { expect, it } from "vitest";
import { createChannel, query, sql } from "@fairway/store";
import { startReceiver } from "../support/receiver.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startExecutorChild } from "../faults/support/children.ts";
import { db, receiver, startSurvivor, useDrill } from "../faults/support/drill.ts";
import { statusCounts, until } from "../faults/support/ledger.ts";

const TOTAL = 1500;

useDrill();

it("kill -9 mid-settle: every dead letter is notified or folded exactly once", async () => {
  const channelRx = await startReceiver();
  try {
    await seedTenant(db.store.db, "a", { maxInFlight: 1000 });
    // Auto-pause off: this job's dead letters are meant to keep coming.
    await query(db.store.db, sql`UPDATE tenants SET consecutive_failure_limit = 0 WHERE id = 'a'`);
    await seedPool(db.store.db, "work", 100, { leaseMs: 2000, timeoutMs: 1500 });
    await createChannel(db.store.db, {
      id: "nch_a",
      tenantId: "a",
      type: "webhook",
      url: `${channelRx.url}/ok`,
      to: null,
      events: null,
      windowSeconds: 1,
    });
    // Every delivery fails for good on its first attempt (503 with one attempt allowed).
    receiver.mode = { kind: "down" };
    await seedDue(db.store.db, "a", TOTAL, { target: { url: `${receiver.url}/t/a` }, maxAttempts: 1 });

    const victim = await startExecutorChild({ DATABASE_URL: db.url, OWNER: "victim", POLL_MS: "20" });
    await receiver
      .waitFor((h) => h.length >= 300, 30_000, "victim delivering")
      .catch((e) => {
        console.log(JSON.stringify(victim.events).slice(0, 3000), victim.stderr().slice(0, 3000));
        throw e;
      });
    victim.signal("SIGKILL");
    expect(await victim.exited).toBe(null);
    const atKill = await statusCounts(db.store.db);

    const survivor = startSurvivor();
    try {
      await until(
        async () =>
          (
            await query<{ dead: number; open: number }>(
              db.store.db,
              sql`SELECT count(*) FILTER (WHERE type = 'work' AND status = 'dead')::int AS dead,
                         count(*) FILTER (WHERE type = 'fairway.notifications' AND status IN ('pending', 'running'))::int AS open
                    FROM triggers`,
            )
          )[0],
        (s) => s.dead === TOTAL && s.open === 0,
        60_000,
        "every trigger dead and every notification sent",
      );
      const sent = await query<{ id: string; folded: number; status: string }>(
        db.store.db,
        sql`SELECT n.id, n.folded, t.status FROM notifications n JOIN triggers t ON t.id = n.id
             WHERE n.event = 'trigger.dead'`,
      );
      const [fold] = await query<{ folded: number }>(
        db.store.db,
        sql`SELECT folded FROM notification_folds WHERE channel_id = 'nch_a' AND event = 'trigger.dead'`,
      );
      console.log(
        JSON.stringify({
          drill: "kill9-notify",
          deadAtKill: atKill.dead ?? 0,
          notifications: sent.length,
          folded: sent.reduce((s, n) => s + n.folded, 0) + fold.folded,
        }),
      );
      expect(sent.every((n) => n.status === "succeeded")).toBe(true);
      expect(sent.length + sent.reduce((s, n) => s + n.folded, 0) + fold.folded).toBe(TOTAL);
      const received = new Set(channelRx.deliveries.map((d) => d.id));
      for (const n of sent) expect(received.has(n.id)).toBe(true);
      // No notification notified about itself.
      const aboutNotifications = await query<{ n: number }>(
        db.store.db,
        sql`SELECT count(*)::int AS n FROM notifications WHERE job_id = 'job_notifications_a'`,
      );
      expect(aboutNotifications[0].n).toBe(0);
    } finally {
      await survivor.stop(2000);
    }
  } finally {
    await channelRx.close();
  }
}, 120_000);
