// W3C Trace Context (https://www.w3.org/TR/trace-context/): what a create request's `traceparent` and
// `tracestate` may hold, and the trace a trigger's attempts belong to. Pure: the API validates with it,
// the executor and the dashboard derive the same trace id from it, with or without an OpenTelemetry SDK.

/** version 00, 32 hex trace id, 16 hex parent id, 2 hex flags; all-zero ids are invalid. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);
/** tracestate: at most 32 comma-separated `key=value` members, 512 characters kept (the spec's bound). */
const TRACESTATE_MEMBER =
  /^[a-z0-9][_0-9a-z\-*/@]{0,255}=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const TRACESTATE_MAX = 512;

export interface TraceParent {
  traceId: string;
  spanId: string;
  /** The sampled flag (bit 0 of the flags). */
  sampled: boolean;
}

/** A traceparent header's parts, or null when it is not a version-00 traceparent. */
export function parseTraceparent(value: string): TraceParent | null {
  const m = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!m || m[1] === ZERO_TRACE || m[2] === ZERO_SPAN) return null;
  return { traceId: m[1], spanId: m[2], sampled: (Number.parseInt(m[3], 16) & 1) === 1 };
}

export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`;
}

/** A tracestate header as kept: its members trimmed, or null when it is empty or malformed (the spec
 *  says a malformed tracestate is dropped, not an error). */
export function parseTracestate(value: string | null | undefined): string | null {
  if (!value || value.length > TRACESTATE_MAX) return null;
  const members = value
    .split(",")
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
  if (members.length === 0 || members.length > 32) return null;
  return members.every((m) => TRACESTATE_MEMBER.test(m)) ? members.join(",") : null;
}

/** The trace a trigger's attempts are spans of, and the span they are children of: a one-time job's
 *  create context when it has one (`join`), else a trace of the trigger's own whose ids are derived
 *  from the trigger id, so every attempt of a cron fire (whichever executor runs it) is a sibling in one
 *  trace and the dashboard names that trace without storing it. */
export function triggerTraceParent(
  triggerId: string,
  job: { parent: string; join: boolean } | null,
): TraceParent & { own: boolean } {
  const p = job?.join ? parseTraceparent(job.parent) : null;
  if (p) return { ...p, own: false };
  const h = hash128(triggerId);
  return { traceId: h, spanId: hash128(`${triggerId}/span`).slice(0, 16), sampled: true, own: true };
}

/** 128 bits of a string as 32 hex characters: four 32-bit FNV-1a-style lanes with murmur3's finaliser.
 *  Not cryptographic: trigger ids are already random; this only has to spread them over the id space. */
function hash128(s: string): string {
  let out = "";
  for (let lane = 0; lane < 4; lane++) {
    let h = (0x811c9dc5 ^ Math.imul(lane + 1, 0x9e3779b1)) >>> 0;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    out += (h >>> 0).toString(16).padStart(8, "0");
  }
  return out === ZERO_TRACE ? "1".padStart(32, "0") : out;
}
