// Structured JSON logs (one object per line) with context fields: request id, tenant, job, trigger.
// Secrets never go in here: callers pass ids, not keys or signing secrets.
export type LogLevel = "debug" | "info" | "warn" | "error";
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(
  opts: { level?: LogLevel; write?: (line: string) => void; base?: Record<string, unknown> } = {},
): Logger {
  const min = order[opts.level ?? "info"];
  const write = opts.write ?? ((line: string) => console.log(line));
  const base = opts.base ?? {};
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (order[level] < min) return;
    const extra: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(fields ?? {})) extra[k] = v instanceof Error ? v.message : v;
    write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...base, ...extra }));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger({ ...opts, base: { ...base, ...fields } }),
  };
}

const nothing = () => {};
/** Logs nothing and costs nothing: no line is built, and a child is the same logger (a logger with a
 *  no-op writer would still build the access line and two child loggers per API request). */
export const silentLogger: Logger = {
  debug: nothing,
  info: nothing,
  warn: nothing,
  error: nothing,
  child: () => silentLogger,
};
