// The raw SKIP LOCKED limit: the cheapest correct claimer there is — a plain postgres.js loop per
// connection, `UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED LIMIT 100) RETURNING`, then one
// batched complete. No fairness, caps, leases or history: the ceiling for any Postgres claimer here.
import postgres from "postgres";

const RAW_CONFIG = { connections: 8, batch: 100 } as const;

export async function rawSetup(url: string, n: number): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`CREATE TABLE raw_jobs (id bigserial PRIMARY KEY, status text NOT NULL DEFAULT 'pending',
                run_at timestamptz NOT NULL DEFAULT now(), locked_at timestamptz)`;
    await sql`CREATE INDEX raw_jobs_pending ON raw_jobs (run_at) WHERE status = 'pending'`;
    await sql`INSERT INTO raw_jobs (run_at) SELECT now() - interval '1 second' FROM generate_series(1, ${n})`;
    await sql`VACUUM ANALYZE raw_jobs`;
  } finally {
    await sql.end();
  }
}

/** Claim up to `limit` due rows: the raw limit's one statement. */
export function rawClaim(sql: postgres.Sql, limit: number): Promise<Array<{ id: string }>> {
  return sql<{ id: string }[]>`
    UPDATE raw_jobs SET status = 'running', locked_at = now()
     WHERE id IN (SELECT id FROM raw_jobs WHERE status = 'pending' AND run_at <= now()
                   ORDER BY run_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING id`;
}

/** Mark finished rows done, in one statement. */
export async function rawComplete(sql: postgres.Sql, ids: string[]): Promise<void> {
  await sql`UPDATE raw_jobs SET status = 'done' WHERE id = ANY(${ids}::bigint[])`;
}

/** Drain the table with `connections` loops; returns the number of rows processed. */
export async function rawDrain(url: string): Promise<number> {
  const sql = postgres(url, { max: RAW_CONFIG.connections, onnotice: () => {}, prepare: true });
  let done = 0;
  const loop = async () => {
    for (;;) {
      const rows = await rawClaim(sql, RAW_CONFIG.batch);
      if (rows.length === 0) return;
      await rawComplete(
        sql,
        rows.map((r) => r.id),
      );
      done += rows.length;
    }
  };
  try {
    await Promise.all(Array.from({ length: RAW_CONFIG.connections }, loop));
  } finally {
    await sql.end();
  }
  return done;
}
