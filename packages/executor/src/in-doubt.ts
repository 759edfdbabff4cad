// Claims whose answer never came. A claim's transaction can commit and its answer be lost: the
// connection cut at COMMIT, the primary killed after its standby acknowledged, a settle with hand-off
// claims given up on after its timeout. Its triggers are then leased to this executor, which never
// received them; left alone they wait for their lease (a minute by default) and are re-run as a
// failed attempt. Every claim's lease token is chosen before it is sent (ClaimInput.leaseToken), so a
// claim that failed is noted here by token, and released as soon as Postgres answers again: its
// triggers go back to the queue with no attempt counted (store release.ts, releaseClaims). A token
// noted is never run here, even if its answer comes late (has()).
import { BoundedMap, type Logger } from "@fairway/core";
import { layoutOf, releaseClaims, type Db, type Layout } from "@fairway/store";

/** A claim as sent: its token, and its tenant where it claimed for one. */
export interface SentClaim {
  leaseToken?: string;
  tenantId?: string;
}

/** Tokens remembered as noted, for a late answer (has()); a token older than this many notes is one
 *  whose answer can no longer come (the settle timeout is seconds). */
const REMEMBERED = 10_000;

export class InDoubtClaims {
  /** Token → its tenant: to release. A note is its own object, so that a release under way does not
   *  drop the note made again meanwhile. */
  private readonly pending = new Map<string, { tenantId: string | undefined }>();
  private readonly noted = new BoundedMap<string, true>(REMEMBERED);

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /** Claims sent whose outcome is unknown. Noting one again (its answer came after all) releases it
   *  again: a release that ran before a late COMMIT found nothing. */
  note(claims: SentClaim[]): void {
    for (const c of claims) {
      if (c.leaseToken === undefined) continue;
      this.pending.set(c.leaseToken, { tenantId: c.tenantId });
      this.noted.set(c.leaseToken, true);
    }
  }

  /** `send(input)` under a lease token of its own; noted when it fails. */
  async send<I extends SentClaim, R>(input: I, send: (sent: I & { leaseToken: string }) => Promise<R>): Promise<R> {
    const sent = { ...input, leaseToken: crypto.randomUUID() };
    try {
      return await send(sent);
    } catch (err) {
      this.note([sent]);
      throw err;
    }
  }

  /** Whether the claim with this token was noted: what it claimed is released, never run here. */
  has(leaseToken: string): boolean {
    return this.noted.has(leaseToken);
  }

  /** Release the noted claims; those whose release failed stay noted for the next call. Never throws.
   *  Returns how many triggers went back to the queue. */
  async release(): Promise<number> {
    if (this.pending.size === 0) return 0;
    const claims = [...this.pending].map(([leaseToken, note]) => ({ leaseToken, note, tenantId: note.tenantId }));
    let layout: Layout;
    try {
      layout = await layoutOf(this.db);
    } catch {
      return 0; // Postgres still away: the next call tries again
    }
    // On a Citus cluster each tenant's at its tenant; elsewhere one round trip.
    let released = 0;
    const written = await layout.fanOut(
      claims,
      (c) => c.tenantId,
      async (scope, group) => {
        const n = await releaseClaims(
          this.db,
          group.map((c) => c.leaseToken),
          scope,
        );
        for (const c of group) if (this.pending.get(c.leaseToken) === c.note) this.pending.delete(c.leaseToken);
        released += n;
      },
    );
    for (const w of written)
      if (w.outcome.status === "rejected")
        this.log.warn("releasing claims whose answer was lost failed; retried", { err: w.outcome.reason });
    if (released > 0) this.log.info("claims whose answer was lost released", { triggers: released });
    return released;
  }
}
