// What tracing.ts (always loaded) and otel.ts (loaded only when tracing is on) share: types only, so
// that neither imports the other's module for them.
import type { ApiTracing } from "@fairway/api";
import type { AttemptTracer } from "@fairway/executor";

export interface TracingSettings {
  /** The traces URL (…/v1/traces). */
  url: string;
  protocol: "http/protobuf" | "http/json";
  headers: Record<string, string>;
  serviceName: string;
  /** How long spans wait to share an export. */
  exportDelayMs: number;
}

/** What the server hands its API and executor when tracing is on. */
export interface ServerTracing {
  api: ApiTracing;
  executor: AttemptTracer;
  /** Ends what is open, exports what is buffered. */
  shutdown(): Promise<void>;
}
