// In-process API for drills: the real Hono app from createApp, driven with app.request().
import { createApp } from "@fairway/api";
import type { AppDeps } from "../../../packages/api/src/env.ts";

export type App = ReturnType<typeof createApp>;

export const ADMIN_TOKEN = "fwadmin_faults_test_token_0123456789";

export async function call(
  app: App,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const res = await app.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json().catch(() => null) };
}

/** Create a tenant through the admin API and return an API key for it. */
export async function tenantWithKey(app: App, id: string, quotas: Record<string, unknown> = {}): Promise<string> {
  const t = await call(app, "POST", "/v1/admin/tenants", ADMIN_TOKEN, { id, name: id, ...quotas });
  if (t.status !== 201) throw new Error(`tenant ${id}: ${t.status} ${JSON.stringify(t.json)}`);
  const k = await call(app, "POST", `/v1/admin/tenants/${id}/keys`, ADMIN_TOKEN);
  return k.json.key;
}

export function appFor(deps: Omit<AppDeps, "adminToken" | "allowPrivateTargets">): App {
  return createApp({ adminToken: ADMIN_TOKEN, allowPrivateTargets: true, ...deps });
}
