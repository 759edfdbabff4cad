// A delegated function as a Citus node runs it (docs/scaling.md, "Delegated functions"): against the
// tenant's shards on the node itself, with plans kept per connection.
//
// Delegated, a function's statements still name the distributed tables, and Citus plans each of them
// as a distributed query on every call (a router plan, the shard query deparsed, then planned again by
// PostgreSQL), since it makes no generic plan of a statement whose shard an argument names. Here the
// same statements are written against the shard relations of the tenant's shard group (tenants_102008
// for tenants, and so on), prepared once per connection and shard group: PostgreSQL then plans them as
// the plain tables they are, and keeps the plans.
//
// Writing a shard directly is safe only while the shard is the tenant's placement on this node. A shard
// move blocks writes before it switches the placement by taking the shard's metadata lock in
// ExclusiveLock on every node: the function takes it in ShareLock, held to commit, then reads the
// placement. Placed here, no move can switch it until this
// transaction ends; placed elsewhere (moved, or the call not delegated), the function runs the
// statements as they are, through Citus, which sends them where the shard is.
import { createHash } from "node:crypto";
import { DISTRIBUTED_TABLES, REFERENCE_TABLES } from "../citus-tables.ts";

const DISTRIBUTED: readonly string[] = ["tenants", ...DISTRIBUTED_TABLES];
const REFERENCE: readonly string[] = REFERENCE_TABLES;

/** A plpgsql function whose statements are rendered from the TypeScript builders (delegated.ts). */
export interface DelegatedParts {
  name: string;
  /** `CREATE OR REPLACE FUNCTION …(…) RETURNS … LANGUAGE plpgsql AS $fn$` and its line break. */
  head: string;
  /** Arguments in order: [name, type]; the first is the tenant (`p_tenant`). */
  params: ReadonlyArray<readonly [string, string]>;
  /** The DECLARE section's variables. */
  declare: string;
  /** Each statement's text, with the function's arguments by name (delegated.ts renderStatic). */
  statements: string[];
  /** The body between BEGIN and END: `run(i)` is statement i as a statement of plpgsql, without its
   *  INTO or semicolon. */
  body(run: (i: number) => string): string;
}

/** The function as one PostgreSQL runs it, and as its migration holds it. */
export function plainText(p: DelegatedParts): string {
  return `${p.head}DECLARE ${p.declare}\nBEGIN\n${p.body((i) => p.statements[i]!)}\nEND $fn$`;
}

const TABLE_REF = new RegExp(`\\b(FROM|JOIN|UPDATE|INTO)(\\s+)(${[...DISTRIBUTED, ...REFERENCE].join("|")})\\b`, "g");
const REFERENCE_WRITE = new RegExp(`\\b(UPDATE|INSERT\\s+INTO|DELETE\\s+FROM)\\s+(${REFERENCE.join("|")})\\b`);

/** Statement `text` against the shard relations: every table it names replaced by a format() argument
 *  (`%n$s`, n from 2: the first is the shard group), the arguments by position (`$1`…). Returns the
 *  format string and the tables in argument order. */
function shardText(text: string, params: ReadonlyArray<readonly [string, string]>) {
  // A reference table has one copy per node: its shard here is one of them, and a write to it would
  // miss the others. The statements only read them (pools).
  if (REFERENCE_WRITE.test(text)) throw new Error(`a delegated statement writes a reference table: ${text}`);
  if (text.includes("$q$")) throw new Error("a delegated statement holds the quote $q$");
  const tables: string[] = [];
  let out = text.replaceAll("%", "%%").replace(TABLE_REF, (_, kw: string, sp: string, table: string) => {
    if (!tables.includes(table)) tables.push(table);
    return `${kw}${sp}%${tables.indexOf(table) + 2}$s`;
  });
  params.forEach(([name], i) => {
    out = out.replace(new RegExp(`\\b${name}\\b`, "g"), () => `$${i + 1}`);
  });
  return { format: out, tables };
}

/** The function as a Citus cluster holds it (citus.ts installs it after the migrations): the shard-local
 *  statements where the tenant's shard group is on this node, else the plain body. */
export function clusterText(p: DelegatedParts): string {
  const shards = p.statements.map((s) => shardText(s, p.params));
  // Prepared statements outlive a change of the function's text on a connection: their names carry a
  // digest of the texts.
  const digest = createHash("sha256")
    .update(shards.map((s) => s.format).join("\0"))
    .digest("hex")
    .slice(0, 8);
  const prepared = (i: number) => `fw_${digest}_${p.name.replace(/^fairway_/, "")}${i}_`;
  const types = p.params.map(([, t]) => t).join(", ");
  const values = p.params.map(() => "%L").join(", ");
  const args = p.params.map(([n]) => n).join(", ");
  const shardOf = (t: string) =>
    REFERENCE.includes(t)
      ? `shard_name('${t}'::regclass, get_shard_id_for_distribution_column('${t}'))`
      : `shard_name('${t}'::regclass, get_shard_id_for_distribution_column('${t}', p_tenant))`;
  const prepare = shards
    .map((s, i) => {
      const name = `${prepared(i)}' || v_shard`;
      return `    IF EXISTS (SELECT 1 FROM pg_prepared_statements WHERE name = '${name}) THEN
      EXECUTE 'DEALLOCATE ${name};
    END IF;
    EXECUTE format($q$PREPARE ${prepared(i)}%1$s(${types}) AS ${s.format}$q$,
      v_shard, ${s.tables.map(shardOf).join(", ")});`;
    })
    .join("\n");
  const plain = p.body((i) => p.statements[i]!);
  const local = p.body((i) => `EXECUTE format('EXECUTE ${prepared(i)}%s(${values})', v_shard, ${args})`);
  return `${p.head}DECLARE ${p.declare} v_shard bigint;
BEGIN
  -- The tenant's shard group (its tenants shard), held here until commit: sql/shard-local.ts.
  v_shard := get_shard_id_for_distribution_column('tenants', p_tenant);
  PERFORM lock_shard_metadata(5, ARRAY[v_shard]);
  IF NOT EXISTS (SELECT 1 FROM pg_dist_placement pl JOIN pg_dist_local_group g ON g.groupid = pl.groupid
                  WHERE pl.shardid = v_shard) THEN
${plain}
  END IF;
  -- Prepared on this connection (a session setting, which a rolled-back PREPARE leaves unset).
  IF current_setting('fairway.p${digest}_' || v_shard, true) IS NULL THEN
${prepare}
    PERFORM set_config('fairway.p${digest}_' || v_shard, 'prepared', false);
  END IF;
${local}
END $fn$`;
}
