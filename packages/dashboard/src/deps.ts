// What the dashboard needs from the app that mounts it: apps/server and apps/edge hand in the API's
// resolved deps, its command layer (dashboardCommands) and its clientAddress.
import type { DashboardCommands } from "@fairway/api";
import type { Coordinator } from "@fairway/coord";
import type { FailedAuthLimiter, Logger, PortalBrand, PortalClaims } from "@fairway/core";
import type { Context } from "hono";
import type { Db } from "@fairway/store";

export interface DashboardDeps {
  db: Db;
  /** Saved and run-now jobs are announced to executors. */
  coordinator: Pick<Coordinator, "limit" | "wake" | "markReady">;
  /** Signs sessions and portal links (a key derived from it per purpose; see packages/core/src/signed-token.ts). */
  adminToken: string;
  /** Origins that may embed a portal view in an iframe (FAIRWAY_PORTAL_ORIGINS); none by default. */
  portalOrigins: readonly string[];
  /** The portal's name and accent (FAIRWAY_PORTAL_TITLE, FAIRWAY_PORTAL_ACCENT); Fairway's own by default. */
  portalBrand?: PortalBrand;
  now: () => number;
  log: Logger;
  /** Every change the dashboard makes, through the API's command layer (packages/api/src/commands):
   *  the same checks and messages as the API; a refusal throws an error with the API's status, code and
   *  message (see refusalOf). The dashboard writes nothing to the store itself. */
  commands: DashboardCommands;
  /** Failed sign-ins and portal tokens, per client address (shared with the API's routes). */
  failedAuth: FailedAuthLimiter;
  /** The client's address, or null when it cannot be told (then nothing is limited). */
  clientAddress: (c: Context) => string | null;
  /** This server exports traces (OTEL_*): every trigger page names its trace. Default false: only a
   *  trigger whose job was created with a traceparent does. */
  traced?: boolean;
  /** FAIRWAY_TRACE_URL_TEMPLATE: the trace id links here, `{traceId}` replaced. */
  traceUrlTemplate?: string;
}

/** Who is looking: the operator (every tenant), or one tenant through a portal session. */
export type Scope =
  | { kind: "admin"; csrf: string }
  | { kind: "tenant"; tenantId: string; csrf: string; portal: boolean; base: string };

export type DashEnv = {
  Variables: {
    dash: DashboardDeps;
    scope: Scope;
    tenantId: string;
    base: string;
    portal: boolean;
    csrf: string;
    portalClaims: PortalClaims;
  };
};
