// What the dashboard needs from the app that mounts it (packages/api's createApp hands its own deps in).
import type { Logger } from "@fairway/core";
import type { Db } from "@fairway/store";

export interface DashboardDeps {
  db: Db;
  coordinator: {
    limit(
      key: string,
      limit: number,
      windowMs: number,
    ): Promise<{ allowed: boolean; remaining: number; retryAfterMs: number }>;
    wake(): Promise<void>;
    markReady(type: string, tenantId: string, dueAtMs: number): Promise<void>;
  };
  /** Signs sessions and portal links (a key derived from it per purpose; see signed-token.ts). */
  adminToken: string;
  /** Origins that may embed a portal view in an iframe (FAIRWAY_PORTAL_ORIGINS); none by default. */
  portalOrigins: readonly string[];
  now: () => number;
  log: Logger;
}

/** Who is looking: the operator (every tenant), or one tenant through a portal session. */
export type Scope =
  | { kind: "admin"; csrf: string }
  | { kind: "tenant"; tenantId: string; csrf: string; portal: boolean; base: string };

export type DashEnv = {
  Variables: { dash: DashboardDeps; scope: Scope; tenantId: string; base: string; portal: boolean; csrf: string };
};
