// What the executor asks of a tracer (docs/observability.md): runtime-neutral, so the executor carries
// no OpenTelemetry dependency; the Node server plugs in the SDK (apps/server otel.ts) only when OTEL_*
// is set. Without a tracer a delivery still carries its job's create-time traceparent, as it came.
import type { DeliveryResult } from "@fairway/core";
import type { ClaimedTrigger, Settled, Settlement } from "@fairway/store";

export interface AttemptTracer {
  /** The spans of one attempt, started as it starts (`startedAt`, Date.now() ms). */
  start(t: ClaimedTrigger, startedAt: number): AttemptSpan;
  /** Settles that landed: their attempts' settle spans end. */
  settled(rows: Settled[]): void;
}

export interface AttemptSpan {
  /** What the delivery sends as `traceparent` (its client span) and `tracestate`. */
  readonly traceparent: string;
  readonly tracestate: string | null;
  /** The attempt ended with `r`, and its settlement `s` goes to the settler (null: none is written, e.g.
   *  a run released by stop()). */
  end(r: DeliveryResult, s: Settlement | null): void;
}

/** The header a delivery carries without a tracer: the create's own context. */
export function forwardedTrace(t: ClaimedTrigger): { traceparent: string; tracestate: string | null } | null {
  return t.trace ? { traceparent: t.trace.parent, tracestate: t.trace.state } : null;
}

/** A handler's ctx.log lines of one attempt, kept up to this many UTF-8 bytes (a newline counted per
 *  line); the cut is said in the attempt (logsTruncated) and the line it fell in is kept up to it. */
export const ATTEMPT_LOG_MAX = 65_536;

const utf8 = new TextEncoder();

export class AttemptLog {
  lines: string[] = [];
  truncated = false;
  private size = 0;
  constructor(private readonly max = ATTEMPT_LOG_MAX) {}

  add(args: unknown[]): void {
    if (this.truncated) return;
    const line = args.map(logText).join(" ");
    const bytes = utf8.encode(line);
    const room = this.max - this.size - 1;
    if (bytes.byteLength > room) {
      this.truncated = true;
      // A cut inside a UTF-8 sequence leaves that character out: what is kept stays within the bound.
      const kept = room > 0 ? new TextDecoder().decode(bytes.subarray(0, room)).replace(/\uFFFD$/, "") : "";
      if (kept) this.lines.push(kept);
      this.size = this.max;
      return;
    }
    this.lines.push(line);
    this.size += bytes.byteLength + 1;
  }
}

function logText(v: unknown): string {
  if (typeof v === "string") return v;
  if (v instanceof Error) return v.stack ?? `${v.name}: ${v.message}`;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
