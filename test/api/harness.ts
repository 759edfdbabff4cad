// The real API app served over HTTP (node-server on a free port) on a fresh Postgres database: what a
// user's curl or SDK talks to. Replies are read as raw text too, to check what is actually sent.
import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import { createMemoryCoordinator, type Coordinator } from "@fairway/coord";
import { createApp } from "@fairway/api";
import type { Db } from "@fairway/store";
import { createTestDb, type TestDb } from "../support/pg.ts";

export const ADMIN = "fwadmin_api_test_token_0123456789";

interface Reply {
  status: number;
  json: any;
  text: string;
}

export interface ApiHarness {
  url: string;
  db: Db;
  tdb: TestDb;
  call(token: string, method: string, path: string, body?: unknown): Promise<Reply>;
  /** A tenant made through the admin API; returns its API key. */
  tenant(id: string, quotas?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startApi(
  opts: { allowPrivateTargets?: boolean; now?: () => number; coordinator?: Coordinator } = {},
): Promise<ApiHarness> {
  const tdb = await createTestDb();
  const app = createApp({
    db: tdb.store.db,
    coordinator: opts.coordinator ?? createMemoryCoordinator(),
    adminToken: ADMIN,
    allowPrivateTargets: opts.allowPrivateTargets ?? true,
    apiRatePerSecond: 0,
    ...(opts.now ? { now: opts.now } : {}),
  });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call: ApiHarness["call"] = async (token, method, path, body) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON; the test looks at text
    }
    return { status: res.status, json, text };
  };
  return {
    url,
    db: tdb.store.db,
    tdb,
    call,
    async tenant(id, quotas = {}) {
      const t = await call(ADMIN, "POST", "/v1/admin/tenants", { id, name: id, ...quotas });
      if (t.status !== 201) throw new Error(`tenant ${id}: ${t.text}`);
      return (await call(ADMIN, "POST", `/v1/admin/tenants/${id}/keys`)).json.key as string;
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await tdb.drop();
    },
  };
}
