// Per-tenant work as one call (docs/scaling.md, "Delegated functions"): a tenant's claim and settle are
// plpgsql functions taking the tenant as an argument. On a Citus cluster each is distributed with its
// tenant (citus.ts), so the coordinator sends the call whole to the tenant's node, where its statements
// run on local shards with the plans plpgsql keeps per connection, instead of the coordinator planning
// and sending each statement. On one PostgreSQL they are the same transaction as the statements they
// hold, in one statement.
//
// The functions' statements are the per-tenant statements of claim.ts and settle.ts, built by the same
// code with the call's values replaced by the function's arguments: what runs is the same SQL either
// way, and a change to a statement changes its function (the migration's text is checked against this
// module: test/store/functions.pg.test.ts).
import { sql, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { jsonColumn, query, type Db } from "../db.ts";
import type { Scope } from "../layout/scope.ts";
import { claimByStatements, claimStatements, type ClaimInput, type ClaimReport } from "./claim.ts";
import { shardStatementsOf } from "./create-job.ts";
import { coldItems } from "./notification-fanout.ts";
import { clusterText, plainText, type DelegatedParts } from "./shard-local.ts";
import { settleBound, settleByStatements, type Settled, type Settlement } from "./settle.ts";

const dialect = new PgDialect();

/** A placeholder standing for a function argument in a statement built by the TS builders: a string
 *  no value holds (control characters are refused in every id: schema.ts `printable`). */
const MARK = "\u0002";
const arg = (name: string) => `${MARK}${name}${MARK}`;

/** The statement's text with each placeholder parameter replaced by its argument's name and every
 *  other parameter written as a literal: static SQL for a plpgsql body. */
function renderStatic(statement: SQL): string {
  const q = dialect.sqlToQuery(statement);
  return q.sql.replace(/\$(\d+)/g, (_, n: string) => literal(q.params[Number(n) - 1]));
}

function literal(v: unknown): string {
  if (typeof v === "string") {
    if (v.startsWith(MARK) && v.endsWith(MARK) && /^\w+$/.test(v.slice(1, -1))) return v.slice(1, -1);
    if (v.includes(MARK)) throw new Error("a placeholder inside a value: build the statement around it");
    return `'${v.replaceAll("'", "''")}'`;
  }
  if (typeof v === "number" && Number.isFinite(v)) return `(${v})`;
  if (typeof v === "boolean") return String(v);
  if (v === null) return "NULL";
  throw new Error(`no literal for a parameter of type ${typeof v}`);
}

/** One plpgsql function: its name and argument types (its identity), and its full text. */
export interface PlpgsqlFunction {
  name: string;
  /** The regprocedure, e.g. `fairway_claim(text, text, integer, text, double precision, text)`. */
  signature: string;
  text: string;
  /** The text a Citus cluster holds instead (citus.ts): the same statements on the tenant's shards
   *  when they are on the node that runs it (shard-local.ts). */
  clusterText: string;
}

function plpgsqlFunction(parts: DelegatedParts): PlpgsqlFunction {
  return {
    name: parts.name,
    signature: `${parts.name}(${parts.params.map(([, t]) => t).join(", ")})`,
    text: plainText(parts),
    clusterText: clusterText(parts),
  };
}

/** The claim of one tenant (claim.ts, ClaimInput.tenantId): its four statements in order. Returns
 *  `{busy, claim}`: statement 1's `busy` and statement 4's row, as claimStatements().decode reads them. */
function claimFunction(): PlpgsqlFunction {
  const input = {
    tenantId: arg("p_tenant"),
    type: arg("p_type"),
    budget: arg("p_budget") as unknown as number,
    owner: arg("p_owner"),
    leaseMs: arg("p_lease_ms") as unknown as number,
    leaseToken: arg("p_token"),
  };
  return plpgsqlFunction({
    name: "fairway_claim",
    head: `CREATE OR REPLACE FUNCTION fairway_claim(p_tenant text, p_type text, p_budget integer, p_owner text,
  p_lease_ms double precision, p_token text) RETURNS json
 LANGUAGE plpgsql AS $fn$
`,
    params: [
      ["p_tenant", "text"],
      ["p_type", "text"],
      ["p_budget", "integer"],
      ["p_owner", "text"],
      ["p_lease_ms", "double precision"],
      ["p_token", "text"],
    ],
    declare: "v_lock record; v_claim record;",
    statements: claimStatements(input).statements.map(renderStatic),
    body: (run) => `${run(0)}
  INTO v_lock;
${run(1)};
${run(2)};
${run(3)}
  INTO v_claim;
  RETURN json_build_object('busy', v_lock.busy, 'claim', to_json(v_claim));`,
  });
}

/** The settle of one tenant's batch (settle.ts, settleStatements with a tenant) without notifications:
 *  the settle, then its attempt records where the batch has any (`p_log`, `p_detail`). Returns the
 *  settle's packed rows. */
function settleFunction(): PlpgsqlFunction {
  const s = settleBound({
    tenantId: arg("p_tenant"),
    input: arg("p_input"),
    ids: arg("p_ids"),
    successors: arg("p_successors"),
  });
  return plpgsqlFunction({
    name: "fairway_settle",
    head: `CREATE OR REPLACE FUNCTION fairway_settle(p_tenant text, p_input jsonb, p_ids text[], p_successors jsonb,
  p_log boolean, p_detail boolean) RETURNS text
 LANGUAGE plpgsql AS $fn$
`,
    params: [
      ["p_tenant", "text"],
      ["p_input", "jsonb"],
      ["p_ids", "text[]"],
      ["p_successors", "jsonb"],
      ["p_log", "boolean"],
      ["p_detail", "boolean"],
    ],
    declare: "v_settled text;",
    statements: [s.settle, s.log, s.detail].map(renderStatic),
    body: (run) => `${run(0)}
  INTO v_settled;
  IF p_log THEN
${run(1)};
  END IF;
  IF p_detail THEN
${run(2)};
  END IF;
  RETURN v_settled;`,
  });
}

/** The create of one tenant's batch (create-job.ts, shardStatements): the counter's lock, the jobs,
 *  their triggers, the count. Returns `{lock: {live, held}, jobs}`: `live` NULL when the tenant has no
 *  counter row yet, and the inserted jobs' rows. */
function createFunction(): PlpgsqlFunction {
  const s = shardStatementsOf({
    tenantId: arg("p_tenant"),
    input: arg("p_input"),
    keys: arg("p_keys"),
    ids: arg("p_ids"),
    maxJobs: arg("p_max_jobs") as unknown as number,
  });
  const jobs = sql`WITH ins AS (${s.jobs}) SELECT coalesce(json_agg(ins), '[]'::json) AS jobs FROM ins`;
  return plpgsqlFunction({
    name: "fairway_create",
    head: `CREATE OR REPLACE FUNCTION fairway_create(p_tenant text, p_input jsonb, p_keys jsonb, p_ids text[],
  p_max_jobs integer) RETURNS json
 LANGUAGE plpgsql AS $fn$
`,
    params: [
      ["p_tenant", "text"],
      ["p_input", "jsonb"],
      ["p_keys", "jsonb"],
      ["p_ids", "text[]"],
      ["p_max_jobs", "integer"],
    ],
    declare: "v_lock record; v_jobs record;",
    statements: [s.lock, jobs, s.triggers, s.counted].map(renderStatic),
    body: (run) => `${run(0)}
  INTO v_lock;
${run(1)}
  INTO v_jobs;
${run(2)};
${run(3)};
  RETURN json_build_object('lock', json_build_object('live', v_lock.live, 'held', v_lock.held), 'jobs', v_jobs.jobs);`,
  });
}

let made: PlpgsqlFunction[] | undefined;

/** The delegated functions, each distributed on a cluster by its first argument, `p_tenant`. Built on
 *  first use (the builders live in modules that import this one). */
export function delegatedFunctions(): PlpgsqlFunction[] {
  made ??= [claimFunction(), settleFunction(), createFunction()];
  return made;
}

/** The call of a tenant's claim (claimAtTenant). */
export function claimCall(input: ClaimInput & { tenantId: string }, leaseToken: string): SQL {
  return sql`SELECT fairway_claim(${input.tenantId}, ${input.type}, ${input.budget}::int, ${input.owner},
                                  ${input.leaseMs}::float8, ${leaseToken}) AS r`;
}

/** The call of a tenant's settle (settleAtTenant), and the decoding of its value. */
export function settleCall(items: Settlement[], tenantId: string) {
  const s = settleBound({ tenantId, items });
  const v = s.values;
  return {
    statement: sql`SELECT fairway_settle(${tenantId}, ${v.input}::jsonb, ${v.ids}::text[], ${v.successors}::jsonb,
                                         ${v.log}, ${v.detail}) AS r`,
    decode: s.decodeSettled,
  };
}

/** A tenant's claim as one call, shaped as claimStatements() is (store hand-off.ts). */
export function claimCallStatements(input: ClaimInput & { tenantId: string }) {
  const leaseToken = input.leaseToken ?? crypto.randomUUID();
  const c = claimStatements({ ...input, leaseToken });
  return {
    statements: [claimCall(input, leaseToken)],
    decode(results: unknown[][]): ClaimReport {
      const r = jsonColumn((results[0] as Array<{ r: { busy: unknown; claim: unknown } | string }>)[0]!.r);
      return c.decode([[{ busy: r.busy }], [r.claim]]);
    },
  };
}

/** A tenant's settle as one call, shaped as settleStatements() is (store hand-off.ts). */
export function settleCallStatements(items: Settlement[], tenantId: string) {
  const c = settleCall(items, tenantId);
  return {
    statements: [c.statement],
    decode: (results: unknown[][]): Settled[] => c.decode((results[0] as Array<{ r: string | null }>)[0]?.r ?? null),
  };
}

/** claimReport() for one tenant, as one call. */
async function claimAtTenant(db: Db, input: ClaimInput & { tenantId: string }): Promise<ClaimReport> {
  const c = claimCallStatements(input);
  return c.decode([await query(db, c.statements[0]!)]);
}

/** settle() for one tenant's batch without notifications, as one call. */
async function settleAtTenant(db: Db, items: Settlement[], tenantId: string): Promise<Settled[]> {
  const c = settleCallStatements(items, tenantId);
  return c.decode([await query(db, c.statements[0]!)]);
}

/** A claim, and which of the given candidates another claim held: one tenant's as one call of its
 *  function, any other as its statements (claim.ts). */
export async function claimReport(db: Db, input: ClaimInput): Promise<ClaimReport> {
  if (input.budget <= 0) return { claimed: [], busy: [] };
  if (input.tenantId !== undefined) return claimAtTenant(db, { ...input, tenantId: input.tenantId });
  return claimByStatements(db, input);
}

/** Settle `items` in one transaction: one tenant's batch without notifications as one call of its
 *  function, any other as statements (settle.ts). */
export async function settleIn(db: Db, items: Settlement[], scope: Scope): Promise<Settled[]> {
  if (items.length === 0) return [];
  if (scope.tenantId !== undefined && coldItems(items).length === 0) return settleAtTenant(db, items, scope.tenantId);
  return settleByStatements(db, items, scope);
}
