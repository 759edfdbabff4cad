// While Postgres is unreachable (a failover's gap, a restart), a request's queries wait for a
// connection that postgres.js keeps retrying, so without a deadline the API would hang until the
// database is back. A request still waiting after `waitMs` gets a 503 database_unavailable with
// Retry-After if the database does not answer a probe of its own within `probeMs` either; a request
// that is merely slow while the database answers keeps running. The abandoned request goes on in the
// background and may still commit: clients retry a create with its Idempotency-Key.
import { connectPostgres, query, sql } from "@fairway/store";

type Fetch = (req: Request, ...rest: unknown[]) => Response | Promise<Response>;

export interface DbDeadline {
  fetch: Fetch;
  close(): Promise<void>;
}

export function withDbDeadline(
  inner: Fetch,
  url: string,
  opts: { waitMs: number; probeMs: number; prepare: boolean },
): DbDeadline {
  const probeStore = connectPostgres(url, { max: 1, prepare: opts.prepare });
  // One probe at a time; its answer is good for a second.
  let last: { at: number; ok: boolean } | null = null;
  let running: Promise<boolean> | null = null;
  const probe = (): Promise<boolean> => {
    if (last && Date.now() - last.at < 1000) return Promise.resolve(last.ok);
    running ??= new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), opts.probeMs);
      // Writable, too: a standby answers but cannot serve the API.
      query<{ r: boolean }>(probeStore.db, sql`select pg_is_in_recovery() as r`).then(
        (rows) => {
          clearTimeout(timer);
          resolve(rows[0]?.r === false);
        },
        () => {
          clearTimeout(timer);
          resolve(false);
        },
      );
    }).then((ok) => {
      last = { at: Date.now(), ok };
      running = null;
      return ok;
    });
    return running;
  };

  const fetch: Fetch = (req, ...rest) => {
    const answer = Promise.resolve().then(() => inner(req, ...rest));
    return new Promise<Response>((resolve, reject) => {
      let done = false;
      const finish = (r: Response) => {
        if (!done) resolve(r);
        done = true;
      };
      answer.then(finish, (err) => {
        if (!done) reject(err);
        done = true;
      });
      const check = async () => {
        if (done) return;
        if (!(await probe())) return finish(unavailable());
        timer = setTimeout(check, opts.waitMs);
      };
      let timer = setTimeout(check, opts.waitMs);
      void answer.finally(() => clearTimeout(timer)).catch(() => {});
    });
  };
  return { fetch, close: () => probeStore.close() };
}

function unavailable(): Response {
  return new Response(
    JSON.stringify({
      error: {
        code: "database_unavailable",
        message: "the database is unavailable (a failover or restart in progress); retry in a few seconds",
      },
    }),
    { status: 503, headers: { "content-type": "application/json", "retry-after": "2" } },
  );
}
