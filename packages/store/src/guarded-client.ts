// Every wait on Postgres has a bound. postgres.js fails a statement whose connection errors or closes,
// but a statement can also go unanswered for good: a socket that died without a close (a restart or a
// cut mid-write, a half-open TCP connection), or a query the driver queued on a connection it then lost
// track of. Awaited in a loop, such a statement stops that loop silently while the rest of the process
// answers as if all were well.
//
// This wraps the driver's client in the one place every statement goes through (drizzle's session, the
// store's query() and pipelineTx(), the migrator): a statement, reserved connection's statement or
// transaction that has neither answered nor failed within `deadlineMs` is failed with
// DatabaseDeadlineError, and the whole driver pool is replaced by a fresh one. The old pool is ended at
// once, which destroys its connections and fails whatever else was waiting on them: no connection that
// went quiet is ever handed out again, and the caller's loop goes on with a pool that reconnects.
//
// A statement that is merely slow is failed too once past the deadline: the deadline is far above
// anything Fairway sends (its statements take milliseconds; retention and materializer batches are
// bounded), so a statement that runs this long is itself the fault.
import type postgres from "postgres";

/** A statement that neither answered nor failed within the store's deadline. */
export class DatabaseDeadlineError extends Error {
  readonly code = "database_deadline";
  constructor(what: string, ms: number, replaced = true) {
    super(`no answer from Postgres to ${what} within ${ms} ms${replaced ? "; its connection pool was replaced" : ""}`);
    this.name = "DatabaseDeadlineError";
  }
}

export interface GuardOptions {
  /** Fail what has had no answer after this many ms (0: never). */
  deadlineMs: number;
  /** Told each time the pool is replaced after a deadline. */
  onReplaced?: (err: DatabaseDeadlineError) => void;
}

type Sql = postgres.Sql;
type Pending = Promise<unknown> & { reject?: (err: unknown) => void; cancel?: () => unknown };

/** The postgres.js client as drizzle and the store see it, guarded. `replaced` counts pool swaps. */
export interface GuardedClient {
  client: Sql;
  replaced(): number;
  end(opts?: { timeout?: number }): Promise<void>;
}

export function guardClient(make: () => Sql, opts: GuardOptions): GuardedClient {
  let current = make();
  let swaps = 0;
  const old = new Set<Sql>();

  /** Replace the pool `from` (once: the first statement past its deadline on it does it). */
  const replace = (from: Sql, err: DatabaseDeadlineError) => {
    if (from !== current) return;
    const next = make();
    // drizzle configures its client's parsers and serializers once, on the client it was given.
    Object.assign(next.options.parsers, from.options.parsers);
    Object.assign(next.options.serializers, from.options.serializers);
    current = next;
    swaps++;
    old.add(from);
    void from
      .end({ timeout: 0 })
      .catch(() => {})
      .finally(() => old.delete(from));
    opts.onReplaced?.(err);
  };

  /** Bound `p` (a statement of pool `from`): past the deadline it is rejected and the pool replaced. */
  const bound = <T extends Pending>(p: T, from: Sql, what: string): T => {
    if (opts.deadlineMs <= 0) return p;
    const timer = setTimeout(() => {
      const err = new DatabaseDeadlineError(what, opts.deadlineMs);
      // A postgres.js query settles through its own reject; anything else is raced by the caller.
      p.reject?.(err);
      replace(from, err);
    }, opts.deadlineMs);
    p.then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
    return p;
  };

  const guardUnsafe =
    (target: { unsafe: Sql["unsafe"] }, from: Sql) =>
    (q: string, params?: unknown[], o?: postgres.UnsafeQueryOptions) =>
      bound(target.unsafe(q, params as never, o) as Pending, from, "a statement");

  const client = {
    get options() {
      return current.options;
    },
    get parameters() {
      return current.parameters;
    },
    unsafe: (q: string, params?: unknown[], o?: postgres.UnsafeQueryOptions) =>
      guardUnsafe(current, current)(q, params, o),
    async reserve() {
      const from = current;
      const reserved = await withDeadline(from.reserve(), opts.deadlineMs, "a connection", (err) => replace(from, err));
      return Object.assign(Object.create(reserved) as object, {
        unsafe: guardUnsafe(reserved, from),
        release: () => reserved.release(),
      });
    },
    begin(...args: unknown[]) {
      const from = current;
      const run = (from.begin as (...a: unknown[]) => Promise<unknown>)(...args);
      return withDeadline(run, opts.deadlineMs, "a transaction", (err) => replace(from, err));
    },
    end: (o?: { timeout?: number }) => current.end(o),
  };
  return {
    client: client as unknown as Sql,
    replaced: () => swaps,
    async end(o = { timeout: 5 }) {
      // An ended pool's end() can wait for a statement that will never settle: bounded as well.
      const all = [current, ...old].map((c) => c.end(o).catch(() => {}));
      await withDeadline(Promise.all(all), ((o.timeout ?? 5) + 1) * 1000, "closing the pool").catch(() => {});
    },
  };
}

/** `p`, or DatabaseDeadlineError after `ms` (told to `onLate` first). `p` settling later is dropped. */
export function withDeadline<T>(
  p: Promise<T>,
  ms: number,
  what: string,
  onLate?: (err: DatabaseDeadlineError) => void,
): Promise<T> {
  if (ms <= 0) return p;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new DatabaseDeadlineError(what, ms, onLate !== undefined);
      onLate?.(err);
      reject(err);
    }, ms);
  });
  p.catch(() => {});
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
