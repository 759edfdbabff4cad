// The layout: how Fairway's statements meet its tables. Chosen once per connection pool (index.ts) and
// carried by one object; callers never ask which one they are on, they call the operation.
// - single: one PostgreSQL. A claim, settle or pass covers every tenant in one statement.
// - per-tenant: a Citus cluster, its tables distributed by tenant (docs/scaling.md). Every hot
//   statement is for one tenant, so it runs on that tenant's node alone; reads across tenants fan out
//   to every shard, once per pass, never per tenant. Its statements are plain SQL that plain PostgreSQL
//   runs too, so the conformance suite runs both layouts on one PostgreSQL.
import type { ClaimedTrigger, ClaimInput, ClaimReport } from "../sql/claim.ts";
import type { ClusterNode } from "../sql/cluster-reads.ts";
import type { Pending, CreateJobResult } from "../sql/create-job.ts";
import type { ExpiredLease } from "../sql/reap.ts";
import type { MaterializeResult } from "../sql/materialize.ts";
import type { TenantDue } from "../sql/ready-index.ts";
import type { Settled, Settlement } from "../sql/settle.ts";
import type { StandbyInput } from "../sql/standby.ts";
import type { TenantRow } from "../sql/tenants.ts";
import type { Db } from "../db.ts";
import type { Written } from "./fan-out.ts";
import type { Scope } from "./scope.ts";

import type { LayoutName } from "./name.ts";

/** A pool's claim for one executor pass. */
interface PoolClaimRequest {
  type: string;
  budget: number;
  owner: string;
  leaseMs: number;
  now: number;
  /** Candidate tenants (and since when each is due) from the ready index; absent: found in Postgres. */
  candidates?: Array<{ tenantId: string; dueAtMs: number }>;
  /** Send one claim; the caller gives it its token and notes it in doubt if it fails. */
  send(input: ClaimInput): Promise<ClaimReport>;
  /** Told when the read of the due tenants failed and the claim made nothing (the per-tenant layout,
   *  a node down, with a ready index to go on from); without it, that failure is thrown. */
  onSweepFailed?(err: unknown): void;
}

export interface PoolClaim {
  claimed: ClaimedTrigger[];
  /** Candidates another claim held. */
  busy: string[];
  /** The candidates the claims were made for (the ready index is told what they got), and the budget
   *  given to them. */
  asked: Array<{ tenantId: string; dueAtMs: number }> | undefined;
  budget: number;
  /** Tenants whose claim failed while the others' went on (per-tenant layout). */
  failed: Map<string, unknown>;
}

/** The per-tenant layout's share of a pool's budget over its tenants, learned from what their claims
 *  return (executor tenant-shares.ts); the single-node layout's claim splits in its statement. */
export interface TenantShares {
  split(type: string, budget: number, now: number, tenantIds: string[]): Map<string, number>;
  /** A tenant's claim came back (also a hand-off's claim). */
  claimed(type: string, tenantId: string, report: ClaimReport, now: number): void;
  /** A tenant's claim failed. */
  failed(type: string, tenantId: string, now: number): void;
  /** A pool's claims of one pass (or a hand-off's) are done: the least slot they started at moves the
   *  pool clock. */
  passed(type: string, claimed: ClaimedTrigger[], now: number): void;
}

export interface Layout {
  readonly name: LayoutName;

  /** `items` written as this layout writes them: one group for every tenant, or a group per tenant
   *  (a few at once). Each group's outcome; a failed group does not stop the others. */
  fanOut<T, R>(
    items: Iterable<T>,
    tenantOf: (item: T) => string | undefined,
    write: (scope: Scope, items: T[]) => Promise<R>,
  ): Promise<Array<Written<T, R>>>;

  /** `visit` for each scope a pass over every tenant takes: every tenant at once, or each tenant in
   *  turn (a page of tenants at a time), until `stopping()`. A tenant whose visit fails is handed to
   *  `onError` and the pass goes on. */
  eachScope(
    db: Db,
    visit: (scope: Scope) => Promise<void>,
    stopping: () => boolean,
    onError: (err: unknown, scope: Scope) => void,
  ): Promise<void>;

  /** A read across every tenant failed: on one PostgreSQL the failure is the caller's (thrown); on
   *  the cluster it is one node's, and the caller goes on. */
  readFailed(err: unknown): void;

  /** A pool's claim: one statement for every candidate, or a claim per tenant for its share; null when
   *  no claim was made (no tenant due, or every one set aside). Candidates, when given, are not empty. */
  claimPool(db: Db, request: PoolClaimRequest, shares: TenantShares): Promise<PoolClaim | null>;

  /** One caller's claim over the candidate tenants (or every due tenant): one statement that splits the
   *  budget by weighted fair share; or, per tenant, a claim of each in turn for what budget is left
   *  (no fair split: the executor's pool claim is claimPool). */
  claim(db: Db, input: ClaimInput): Promise<ClaimReport>;

  /** What a settle's hand-off claims got, for the shares (per-tenant layout) or nothing. */
  handedOff(type: string, report: ClaimReport, shares: TenantShares, now: number): void;

  /** A standby claim as sent: one, or one per tenant. */
  standby(input: StandbyInput): StandbyInput[];

  /** Settle `items`: one transaction, or one per tenant. */
  settle(db: Db, items: Settlement[]): Promise<Settled[]>;

  /** A materializer pass: due cron fires and onBusy decisions. `found`: the due jobs it saw. */
  materialize(
    db: Db,
    at: Date,
    lookaheadMs: number,
    batch: number,
    onError: (what: string, tenantId: string, err: unknown) => void,
  ): Promise<{ m: MaterializeResult; found: number }>;

  /** The earliest due trigger of each given tenant in a pool (the ready index's reschedule). */
  pendingByTenant(db: Db, type: string, tenantIds: string[]): Promise<TenantDue[]>;

  findExpiredLeases(db: Db, limit: number): Promise<ExpiredLease[]>;
  dropSpentLeases(db: Db, limit: number): Promise<number>;
  expireLostExecutors(db: Db, recentMs: number): Promise<{ lost: string[]; cut: number }>;
  authenticateKey(db: Db, hash: string): Promise<{ keyId: string; tenant: TenantRow } | null>;

  /** One tenant's jobs created under one limit (inside `tx` when given). */
  createJobs(db: Db, batch: Pending[]): Promise<CreateJobResult[]>;

  /** The shape of a read across tenants that differs by layout: one statement with lateral or
   *  correlated subqueries (one PostgreSQL), or reads Citus can push to every shard (per-tenant). */
  shape<T>(shapes: { single: T; perTenant: T }): T;

  /** The cluster's nodes with what each holds; null on one PostgreSQL. */
  nodes(db: Db): Promise<ClusterNode[] | null>;
}
