// Fairway processes sharing one database for the production drills: the API and executors as the real
// server (`apps/server/src/main.ts`), each with its own data directory and the same secrets key.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { createAdminClient, createClient, type FairwayClient } from "@fairway/sdk";
import { spawnFairway, startFairway, type FairwayProcess } from "../../support/fairway-process.ts";

export interface Fleet {
  adminToken: string;
  /** Start a server with `role` on the fleet's database settings (plus `extra`). */
  start(role: "all" | "api" | "executor", extra?: Record<string, string>): Promise<FairwayProcess>;
  /** Spawn a server without waiting for it to start: its output as it comes. */
  spawn(role: "all" | "api" | "executor", extra?: Record<string, string>): { output(): string; kill(): void };
  /** A tenant and an SDK client for it on `apiUrl`. */
  tenant(apiUrl: string, id: string, maxInFlight?: number): Promise<{ client: FairwayClient; secret: string }>;
  stop(): Promise<void>;
}

export function fleet(env: Record<string, string>): Fleet {
  const adminToken = `fwadmin_test_${randomBytes(12).toString("hex")}`;
  const secretsKey = randomBytes(32).toString("base64");
  const procs: FairwayProcess[] = [];
  const dirs: string[] = [];
  const spawned: ChildProcess[] = [];
  /** A server's own data directory, and the fleet's admin token and secrets key. */
  const settings = (role: string) => {
    const dir = mkdtempSync(join(tmpdir(), "fairway-prod-"));
    dirs.push(dir);
    return {
      FAIRWAY_DATA_DIR: dir,
      FAIRWAY_ADMIN_TOKEN: adminToken,
      FAIRWAY_SECRETS_KEY: secretsKey,
      FAIRWAY_ROLE: role,
    };
  };
  return {
    adminToken,
    async start(role, extra = {}) {
      const p = await startFairway(
        { ...settings(role), FAIRWAY_POLL_MS: "50", ...env, ...extra },
        role === "executor" ? /Fairway executor — ()/ : undefined,
      );
      procs.push(p);
      return p;
    },
    spawn(role, extra = {}) {
      const p = spawnFairway({ ...settings(role), ...env, ...extra });
      spawned.push(p.child);
      return { output: p.output, kill: () => void p.child.kill("SIGKILL") };
    },
    async tenant(apiUrl, id, maxInFlight = 1000) {
      const admin = createAdminClient({ baseUrl: apiUrl, adminToken });
      const t = await admin.tenants.create({ id, name: id, maxInFlight });
      const key = (await admin.tenants.createKey(id)).key;
      return { client: createClient({ baseUrl: apiUrl, apiKey: key }), secret: t.signingSecret };
    },
    async stop() {
      await Promise.all(procs.map((p) => p.stop("SIGKILL")));
      for (const c of spawned) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}
