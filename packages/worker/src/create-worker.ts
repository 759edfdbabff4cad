// createWorker: Fairway's executor in the user's own Node process, with their handlers as its pools —
// the same fair claim, tenant caps, leases, retries, dead letters and graceful stop as the server's.
// It claims only its handlers' types; the server's executor leaves those pools to it (the worker
// stamps them as handler pools on start and on every heartbeat, store handler-pools.ts).
import { createLogger, parseTraceparent, type Logger } from "@fairway/core";
import { Executor, type Handler } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { connectPostgres, HANDLER_HEARTBEAT_MS, touchHandlerPools } from "@fairway/store";
import type { Worker, WorkerOptions } from "./types.ts";

/** Each handler's attempt ends when its signal aborts (its timeout, or stop() out of grace), even if
 *  the handler ignores the signal: otherwise a stuck handler would hold its slot and its renewed lease
 *  forever. The handler's own promise is left to settle on its own. */
function boundByTimeout(handlers: Record<string, Handler>, otel: OtelApi | null): Record<string, Handler> {
  const bound: Record<string, Handler> = {};
  for (const [type, handler] of Object.entries(handlers)) {
    bound[type] = (ctx) => {
      const signal = ctx.signal;
      if (signal.aborted) throw new Error("aborted before start");
      return new Promise((resolve, reject) => {
        const onAbort = () => reject(new Error("aborted: the attempt timed out or the worker stopped"));
        signal.addEventListener("abort", onAbort, { once: true });
        Promise.resolve()
          .then(() => inTraceContext(otel, ctx.traceparent, ctx.tracestate, () => handler(ctx)))
          .then(resolve, reject)
          .finally(() => signal.removeEventListener("abort", onAbort));
      });
    };
  }
  return bound;
}

type OtelApi = typeof import("@opentelemetry/api");

/** @opentelemetry/api when the app has it (an optional peer dependency); null otherwise. */
async function loadOtelApi(): Promise<OtelApi | null> {
  try {
    return await import("@opentelemetry/api");
  } catch {
    return null;
  }
}

/** Runs `fn` with the attempt's span as the active context, so the handler's own spans (its HTTP
 *  calls, its database queries) join the job's trace. */
function inTraceContext<T>(
  otel: OtelApi | null,
  traceparent: string | null,
  tracestate: string | null,
  fn: () => T,
): T {
  const p = otel && traceparent ? parseTraceparent(traceparent) : null;
  if (!otel || !p) return fn();
  const ctx = otel.trace.setSpanContext(otel.context.active(), {
    traceId: p.traceId,
    spanId: p.spanId,
    traceFlags: p.sampled ? 1 : 0,
    isRemote: true,
    traceState: tracestate ? otel.createTraceState(tracestate) : undefined,
  });
  return otel.context.with(ctx, fn);
}

const TYPE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/;

export function createWorker<P extends Record<string, unknown> = Record<string, unknown>>(
  opts: WorkerOptions<P>,
): Worker {
  const types = Object.keys(opts.handlers);
  if (types.length === 0) throw new TypeError("createWorker: handlers must name at least one pool type");
  for (const t of types) {
    if (!TYPE.test(t))
      throw new TypeError(`createWorker: "${t}" is not a pool type (1-63 characters: letters, digits, _ . or -)`);
    if (t === "webhook")
      throw new TypeError(
        `createWorker: "webhook" is the server's webhook pool; name handler types otherwise (e.g. "email.send")`,
      );
  }
  if (!/^postgres(ql)?:\/\//.test(opts.databaseUrl))
    throw new TypeError("createWorker: databaseUrl must be a postgres:// URL");

  const log =
    (opts.log as Logger | undefined) ??
    createLogger({ level: opts.logLevel ?? "info", base: { component: "fairway-worker" } });
  let store: ReturnType<typeof connectPostgres> | null = null;
  let executor: Executor | null = null;
  let transport: ReturnType<typeof createUndiciTransport> | null = null;
  let heartbeat: ReturnType<typeof setInterval> | null = null;
  let stopping: Promise<void> | null = null;

  const worker: Worker = {
    types,
    get inFlight() {
      return executor?.inFlight ?? 0;
    },
    get stats() {
      return executor?.stats ?? { claimed: 0, settled: 0, released: 0, reaped: 0, loopErrors: 0 };
    },
    async start() {
      if (store) return worker;
      store = connectPostgres(opts.databaseUrl, { max: opts.dbPool ?? 5 });
      const db = store.db;
      await touchHandlerPools(db, types); // before claiming: from now on the server leaves these pools alone
      transport = createUndiciTransport({ allowPrivate: opts.allowPrivateTargets ?? false });
      executor = new Executor({
        db,
        transport,
        handlers: boundByTimeout(opts.handlers as unknown as Record<string, Handler>, await loadOtelApi()),
        types,
        pollMs: opts.pollMs,
        allowPrivateTargets: opts.allowPrivateTargets ?? false,
        log,
      }).start();
      heartbeat = setInterval(() => {
        touchHandlerPools(db, types).catch((err) => log.warn("handler heartbeat failed; will retry", { err }));
      }, HANDLER_HEARTBEAT_MS);
      heartbeat.unref?.();
      log.info("worker started", { types, owner: executor.owner });
      return worker;
    },
    stop(graceMs) {
      stopping ??= (async () => {
        if (heartbeat) clearInterval(heartbeat);
        await executor?.stop(graceMs ?? opts.graceMs ?? 10_000);
        await transport?.close();
        await store?.close();
      })();
      return stopping;
    },
  };
  return worker;
}
