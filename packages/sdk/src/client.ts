// createClient (tenant key) and createAdminClient (admin token): typed wrappers over the HTTP API.
import { qs, requester, type HttpOptions } from "./http.ts";
import type {
  CreateJobInput, Job, Page, PoolConfig, Quota, Tenant, TenantQuotas, Trigger, UpdateJobInput,
} from "./types.ts";

export interface ClientOptions {
  /** e.g. http://127.0.0.1:8787 */
  baseUrl: string;
  /** A tenant API key (fw_…). */
  apiKey: string;
  fetch?: typeof fetch;
}

export interface PageOptions {
  limit?: number;
  cursor?: string;
}

const enc = encodeURIComponent;

export function createClient(opts: ClientOptions) {
  const req = requester({ baseUrl: opts.baseUrl, token: opts.apiKey, fetch: opts.fetch } satisfies HttpOptions);
  return {
    jobs: {
      create: <P>(input: CreateJobInput<P>, o: { idempotencyKey?: string } = {}) =>
        req<Job<P>>("POST", "/v1/jobs", normalise(input), o.idempotencyKey ? { "idempotency-key": o.idempotencyKey } : {}),
      list: (o: PageOptions = {}) => req<Page<Job>>("GET", `/v1/jobs${qs({ limit: o.limit, cursor: o.cursor })}`),
      get: (id: string) => req<Job>("GET", `/v1/jobs/${enc(id)}`),
      update: <P>(id: string, patch: UpdateJobInput<P>) => req<Job<P>>("PATCH", `/v1/jobs/${enc(id)}`, normalise(patch)),
      delete: (id: string) => req<Job>("DELETE", `/v1/jobs/${enc(id)}`),
      pause: (id: string) => req<Job>("POST", `/v1/jobs/${enc(id)}/pause`),
      resume: (id: string) => req<Job>("POST", `/v1/jobs/${enc(id)}/resume`),
      run: (id: string) => req<Trigger>("POST", `/v1/jobs/${enc(id)}/run`),
      triggers: (id: string, o: PageOptions = {}) =>
        req<Page<Trigger>>("GET", `/v1/jobs/${enc(id)}/triggers${qs({ limit: o.limit, cursor: o.cursor })}`),
    },
    triggers: {
      get: (id: string) => req<Trigger>("GET", `/v1/triggers/${enc(id)}`),
      replay: (id: string) => req<Trigger>("POST", `/v1/triggers/${enc(id)}/replay`),
    },
    deadLetters: (o: PageOptions & { jobId?: string } = {}) =>
      req<Page<Trigger>>("GET", `/v1/dead-letters${qs({ limit: o.limit, cursor: o.cursor, jobId: o.jobId })}`),
    quota: () => req<Quota>("GET", "/v1/quota"),
  };
}

export interface AdminClientOptions {
  baseUrl: string;
  adminToken: string;
  fetch?: typeof fetch;
}

export function createAdminClient(opts: AdminClientOptions) {
  const req = requester({ baseUrl: opts.baseUrl, token: opts.adminToken, fetch: opts.fetch });
  return {
    tenants: {
      create: (input: { id?: string; name: string } & TenantQuotas) =>
        req<Tenant & { signingSecret: string }>("POST", "/v1/admin/tenants", input),
      list: (o: PageOptions = {}) => req<Page<Tenant>>("GET", `/v1/admin/tenants${qs({ limit: o.limit, cursor: o.cursor })}`),
      get: (id: string) => req<Tenant>("GET", `/v1/admin/tenants/${enc(id)}`),
      update: (id: string, patch: TenantQuotas & { name?: string; status?: "active" | "suspended" }) =>
        req<Tenant>("PATCH", `/v1/admin/tenants/${enc(id)}`, patch),
      createKey: (id: string) => req<{ id: string; key: string; prefix: string }>("POST", `/v1/admin/tenants/${enc(id)}/keys`),
      revokeKey: (id: string, keyId: string) => req<{ id: string; revoked: true }>("DELETE", `/v1/admin/tenants/${enc(id)}/keys/${enc(keyId)}`),
      rotateSigningSecret: (id: string) =>
        req<{ signingSecret: string; previousSecretExpiresAt: string }>("POST", `/v1/admin/tenants/${enc(id)}/signing-secret/rotate`),
      /** A signed, short-lived link to this tenant's dashboard view (default 15 minutes). */
      portalLink: (id: string, o: { ttlSeconds?: number } = {}) =>
        req<{ url: string; expiresAt: string }>("POST", `/v1/admin/tenants/${enc(id)}/portal-link`, o),
    },
    pools: {
      get: (type: string) => req<PoolConfig>("GET", `/v1/admin/pools/${enc(type)}`),
      put: (type: string, cfg: Omit<PoolConfig, "type" | "leaseMs" | "maxAttempts" | "initialDelayMs" | "maxDelayMs"> & Partial<PoolConfig>) =>
        req<PoolConfig>("PUT", `/v1/admin/pools/${enc(type)}`, cfg),
    },
    stats: () => req<{ tenants: Array<Record<string, unknown>> }>("GET", "/v1/admin/stats"),
  };
}

export type FairwayClient = ReturnType<typeof createClient>;
export type FairwayAdminClient = ReturnType<typeof createAdminClient>;

function normalise<T extends { schedule?: unknown }>(input: T): T {
  const s = input.schedule as { at?: unknown } | undefined;
  if (s && s.at instanceof Date) return { ...input, schedule: { at: s.at.toISOString() } };
  return input;
}
