// What the dashboard needs from the app that mounts it (packages/api's createApp hands its own deps in).
import type { Coordinator } from "@fairway/coord";
import type { FailedAuthLimiter, Logger } from "@fairway/core";
import type { Context } from "hono";
import type { PortalClaims } from "./portal-link.ts";
import type { Db } from "@fairway/store";

export interface DashboardDeps {
  db: Db;
  /** Saved and run-now jobs are announced to executors. */
  coordinator: Pick<Coordinator, "limit" | "wake" | "markReady">;
  /** Signs sessions and portal links (a key derived from it per purpose; see signed-token.ts). */
  adminToken: string;
  /** Origins that may embed a portal view in an iframe (FAIRWAY_PORTAL_ORIGINS); none by default. */
  portalOrigins: readonly string[];
  now: () => number;
  log: Logger;
  /** Makes a notification channel from an API-shaped body with the API's own rules (packages/api hands
   *  in the function its route uses); a refusal throws an error with the API's status, code and message. */
  addChannel: (tenantId: string, body: unknown) => Promise<{ id: string }>;
  /** Failed sign-ins and portal tokens, per client address (shared with the API's routes). */
  failedAuth: FailedAuthLimiter;
  /** The client's address, or null when it cannot be told (then nothing is limited). */
  clientAddress: (c: Context) => string | null;
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
