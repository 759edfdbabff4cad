// createClient (tenant key) and createAdminClient (admin token): typed wrappers over the HTTP API.
import { paginate, qs, requester, type HttpOptions, type Requester } from "./http.ts";
import type {
  Backfill,
  BackfillInput,
  ApiKey,
  CreateChannelInput,
  CreateJobInput,
  DeadLetter,
  DeadLetterReplay,
  Job,
  KeyDefaultsPatch,
  KeyInfo,
  KeyOverride,
  KeyPolicy,
  ListJobsOptions,
  Notification,
  NotificationChannel,
  NotificationEvent,
  Page,
  PoolConfig,
  Quota,
  Secret,
  Stats,
  Tenant,
  TenantQuotas,
  Plan,
  CreatePlanInput,
  PlanPatch,
  JobBatchResult,
  RerunInput,
  Trigger,
  UpdateJobInput,
} from "./types.ts";

interface CommonOptions {
  /** e.g. http://127.0.0.1:8787 */
  baseUrl: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /** Retries of a 429 or 503 answer (Retry-After honoured). Default 3; 0 disables. */
  maxRetries?: number;
  /** The longest wait between two tries. Default 30 000 ms. */
  maxRetryDelayMs?: number;
}

export interface ClientOptions extends CommonOptions {
  /** A tenant API key (fw_…). */
  apiKey: string;
}

export interface AdminClientOptions extends CommonOptions {
  adminToken: string;
}

export interface PageOptions {
  /** Items per page, 1-200. Default 50. */
  limit?: number;
  cursor?: string;
}

const enc = encodeURIComponent;

/** The fairness-key methods, over the tenant's own routes or the admin's for one tenant. */
function keyMethods(req: Requester, defaultsPath: string, keysPath: string) {
  const list = (o: PageOptions = {}) =>
    req<Page<KeyInfo>>("GET", `${keysPath}${qs({ limit: o.limit, cursor: o.cursor })}`);
  return {
    keys: {
      /** A key's running, due, lag, worker time share, override and policy in force (never seen: zeros). */
      get: (key: string) => req<KeyInfo>("GET", `${keysPath}/${enc(key)}`),
      /** Override one key's policy; a field left out takes the tenant's default. */
      put: (key: string, override: KeyOverride) => req<KeyInfo>("PUT", `${keysPath}/${enc(key)}`, override),
      /** Back to the defaults (idempotent). */
      delete: (key: string) => req<KeyInfo>("DELETE", `${keysPath}/${enc(key)}`),
      /** Keys with due or running work, and keys with an override, by key. */
      list,
      all: (o: Omit<PageOptions, "cursor"> = {}) => paginate((cursor) => list({ ...o, cursor })),
    },
    keyDefaults: {
      get: () => req<KeyPolicy>("GET", defaultsPath),
      /** JSON Merge Patch: only the fields given change; null returns one to its default. */
      update: (patch: KeyDefaultsPatch) => req<KeyPolicy>("PATCH", defaultsPath, patch),
    },
  };
}
const http = (o: CommonOptions, token: string): HttpOptions => ({
  baseUrl: o.baseUrl,
  token,
  fetch: o.fetch,
  maxRetries: o.maxRetries,
  maxRetryDelayMs: o.maxRetryDelayMs,
});

export function createClient(opts: ClientOptions) {
  const req = requester(http(opts, opts.apiKey));
  const listJobs = (o: ListJobsOptions = {}) =>
    req<Page<Job>>(
      "GET",
      `/v1/jobs${qs({
        limit: o.limit,
        cursor: o.cursor,
        status: o.status,
        type: o.type,
        name: o.name,
        key: o.key,
        tag: o.tags && Object.entries(o.tags).map(([k, v]) => `${k}:${v}`),
        failing: o.failing,
      })}`,
    );
  const jobTriggers = (id: string, o: PageOptions & { key?: string } = {}) =>
    req<Page<Trigger>>("GET", `/v1/jobs/${enc(id)}/triggers${qs({ limit: o.limit, cursor: o.cursor, key: o.key })}`);
  const deadLetters = (o: PageOptions & { jobId?: string } = {}) =>
    req<Page<DeadLetter>>("GET", `/v1/dead-letters${qs({ limit: o.limit, cursor: o.cursor, jobId: o.jobId })}`);
  const replayDeadLetters = (jobId: string) => req<DeadLetterReplay>("POST", "/v1/dead-letters/replay", { jobId });
  const channels = (o: PageOptions = {}) =>
    req<Page<NotificationChannel>>("GET", `/v1/notification-channels${qs({ limit: o.limit, cursor: o.cursor })}`);
  const notifications = (
    o: PageOptions & { channelId?: string; event?: NotificationEvent | "notification.test" } = {},
  ) =>
    req<Page<Notification>>(
      "GET",
      `/v1/notifications${qs({ limit: o.limit, cursor: o.cursor, channelId: o.channelId, event: o.event })}`,
    );
  return {
    jobs: {
      create: <P>(input: CreateJobInput<P>, o: { idempotencyKey?: string } = {}) =>
        req<Job<P>>(
          "POST",
          "/v1/jobs",
          normalise(input),
          o.idempotencyKey ? { "idempotency-key": o.idempotencyKey } : {},
        ),
      /** Up to 1000 creates in one request (POST /v1/jobs/batch): one result per item, in input order,
       *  a refused item's error in its result (nothing thrown for it); the valid ones written together. */
      createMany: <P>(items: Array<CreateJobInput<P> & { idempotencyKey?: string }>) =>
        req<JobBatchResult<P>>("POST", "/v1/jobs/batch", { jobs: items.map((i) => normalise(i)) }),
      list: listJobs,
      /** Every job, page by page: `for await (const job of client.jobs.all()) …` */
      all: (o: Omit<ListJobsOptions, "cursor"> = {}) => paginate((cursor) => listJobs({ ...o, cursor })),
      get: (id: string) => req<Job>("GET", `/v1/jobs/${enc(id)}`),
      /** JSON Merge Patch: only the fields given change; null clears one. */
      update: <P>(id: string, patch: UpdateJobInput<P>) =>
        req<Job<P>>("PATCH", `/v1/jobs/${enc(id)}`, normalise(patch)),
      /** Cancels the job; idempotent (a second call returns the same cancelled job). */
      delete: (id: string) => req<Job>("DELETE", `/v1/jobs/${enc(id)}`),
      pause: (id: string) => req<Job>("POST", `/v1/jobs/${enc(id)}/pause`),
      resume: (id: string) => req<Job>("POST", `/v1/jobs/${enc(id)}/resume`),
      run: (id: string) => req<Trigger>("POST", `/v1/jobs/${enc(id)}/run`),
      triggers: jobTriggers,
      /** Backfill a cron job: its fires in [from, to), behind the tenant's live work (at most 1000). */
      backfill: (id: string, input: BackfillInput) =>
        req<Backfill>("POST", `/v1/jobs/${enc(id)}/backfill`, {
          from: iso(input.from),
          to: iso(input.to),
          ...(input.overlap ? { overlap: input.overlap } : {}),
        }),
      backfills: (id: string, o: PageOptions = {}) =>
        req<Page<Backfill>>("GET", `/v1/jobs/${enc(id)}/backfills${qs({ limit: o.limit, cursor: o.cursor })}`),
      allTriggers: (id: string, o: Omit<PageOptions, "cursor"> = {}) =>
        paginate((cursor) => jobTriggers(id, { ...o, cursor })),
    },
    backfills: {
      get: (id: string) => req<Backfill>("GET", `/v1/backfills/${enc(id)}`),
      /** Cancels its triggers not yet claimed; idempotent. */
      cancel: (id: string) => req<Backfill>("DELETE", `/v1/backfills/${enc(id)}`),
    },
    triggers: {
      get: (id: string) => req<Trigger>("GET", `/v1/triggers/${enc(id)}`),
      replay: (id: string) => req<Trigger>("POST", `/v1/triggers/${enc(id)}/replay`),
      /** A pending one never runs; a running one's request is cut, its attempt recorded cancelled. */
      cancel: (id: string) => req<Trigger>("POST", `/v1/triggers/${enc(id)}/cancel`),
      /** A finished trigger run again as a new trigger (triggeredBy "rerun"); `input` replaces its
       *  payload or request body for that run alone, the job unchanged. */
      rerun: (id: string, input: RerunInput = {}) => req<Trigger>("POST", `/v1/triggers/${enc(id)}/rerun`, input),
    },
    deadLetters,
    allDeadLetters: (o: Omit<PageOptions, "cursor"> & { jobId?: string } = {}) =>
      paginate((cursor) => deadLetters({ ...o, cursor })),
    /** Replay a job's dead letters, oldest first, at most 100 per call; `remaining` says how many are left. */
    replayDeadLetters,
    /** Every dead letter of a job, in as many calls as it takes; the totals of all of them. */
    replayAllDeadLetters: async (jobId: string) => {
      let replayed = 0;
      for (;;) {
        const r = await replayDeadLetters(jobId);
        replayed += r.replayed;
        // Another caller may hold some rows (skipped, left for later): stop when a call moves none.
        if (r.remaining === 0 || r.replayed === 0) return { jobId, replayed, remaining: r.remaining };
      }
    },
    quota: () => req<Quota>("GET", "/v1/quota"),
    notificationChannels: {
      create: (input: CreateChannelInput) => req<NotificationChannel>("POST", "/v1/notification-channels", input),
      list: channels,
      delete: (id: string) => req<null>("DELETE", `/v1/notification-channels/${enc(id)}`),
      /** Queue a test notification to the channel (outside its fold window). */
      test: (id: string) => req<Notification>("POST", `/v1/notification-channels/${enc(id)}/test`),
    },
    /** What was sent, to which channel, when, and how it went; newest first. */
    notifications,
    allNotifications: (o: Omit<PageOptions, "cursor"> & { channelId?: string } = {}) =>
      paginate((cursor) => notifications({ ...o, cursor })),
    /** Fairness keys: `keys.get|put|delete|list|all`, `keyDefaults.get|update`. */
    ...keyMethods(req, "/v1/key-defaults", "/v1/keys"),
    secrets: {
      /** Create or replace; the value is never returned. */
      put: (name: string, value: string) => req<Secret>("PUT", `/v1/secrets/${enc(name)}`, { value }),
      list: () => req<{ data: Secret[] }>("GET", "/v1/secrets"),
      delete: (name: string) => req<null>("DELETE", `/v1/secrets/${enc(name)}`),
    },
  };
}

export function createAdminClient(opts: AdminClientOptions) {
  const req = requester(http(opts, opts.adminToken));
  const listTenants = (o: PageOptions = {}) =>
    req<Page<Tenant>>("GET", `/v1/admin/tenants${qs({ limit: o.limit, cursor: o.cursor })}`);
  const listPlans = (o: PageOptions = {}) =>
    req<Page<Plan>>("GET", `/v1/admin/plans${qs({ limit: o.limit, cursor: o.cursor })}`);
  return {
    tenants: {
      /** `plan`: the quota plan whose values the tenant takes where it sets none of its own. */
      create: (input: { id?: string; name: string; plan?: string } & TenantQuotas) =>
        req<Tenant & { signingSecret: string }>("POST", "/v1/admin/tenants", input),
      list: listTenants,
      all: (o: Omit<PageOptions, "cursor"> = {}) => paginate((cursor) => listTenants({ ...o, cursor })),
      get: (id: string) => req<Tenant>("GET", `/v1/admin/tenants/${enc(id)}`),
      /** JSON Merge Patch: only the fields given change; a quota field's null removes the tenant's own
       *  value (its plan's, else the default, applies); `plan` moves it to another plan (null: none). */
      update: (
        id: string,
        patch: { [K in keyof TenantQuotas]?: TenantQuotas[K] | null } & {
          name?: string;
          status?: "active" | "suspended";
          plan?: string | null;
        },
      ) => req<Tenant>("PATCH", `/v1/admin/tenants/${enc(id)}`, patch),
      createKey: (id: string) => req<ApiKey>("POST", `/v1/admin/tenants/${enc(id)}/keys`),
      revokeKey: (id: string, keyId: string) =>
        req<{ id: string; revoked: true }>("DELETE", `/v1/admin/tenants/${enc(id)}/keys/${enc(keyId)}`),
      rotateSigningSecret: (id: string) =>
        req<{ signingSecret: string; previousSecretExpiresAt: string }>(
          "POST",
          `/v1/admin/tenants/${enc(id)}/signing-secret/rotate`,
        ),
      /** The secret deliveries are signed with (and the previous one during a rotation's overlap). */
      signingSecret: (id: string) =>
        req<{ signingSecret: string; previousSigningSecret?: string; previousSecretExpiresAt?: string }>(
          "GET",
          `/v1/admin/tenants/${enc(id)}/signing-secret`,
        ),
      /** A signed, short-lived link to this tenant's dashboard view (default 15 minutes). */
      portalLink: (id: string, o: { ttlSeconds?: number } = {}) =>
        req<{ url: string; expiresAt: string }>("POST", `/v1/admin/tenants/${enc(id)}/portal-link`, o),
      /** One tenant's fairness keys and key defaults, as the tenant's own client has them. */
      fairness: (id: string) =>
        keyMethods(req, `/v1/admin/tenants/${enc(id)}/key-defaults`, `/v1/admin/tenants/${enc(id)}/fairness-keys`),
      /** Ends every portal link and session of the tenant now. */
      revokePortalSessions: (id: string) =>
        req<{ tenantId: string; revokedAt: string }>("POST", `/v1/admin/tenants/${enc(id)}/portal-sessions/revoke`),
    },
    /** Quota plans: a change applies to every tenant on the plan from its next claim. */
    plans: {
      create: (input: CreatePlanInput) => req<Plan>("POST", "/v1/admin/plans", input),
      list: listPlans,
      all: (o: Omit<PageOptions, "cursor"> = {}) => paginate((cursor) => listPlans({ ...o, cursor })),
      get: (id: string) => req<Plan>("GET", `/v1/admin/plans/${enc(id)}`),
      update: (id: string, patch: PlanPatch) => req<Plan>("PATCH", `/v1/admin/plans/${enc(id)}`, patch),
      /** 409 plan_in_use while a tenant is on it. */
      delete: (id: string) => req<{ id: string; deleted: true }>("DELETE", `/v1/admin/plans/${enc(id)}`),
    },
    pools: {
      list: () => req<{ data: PoolConfig[] }>("GET", "/v1/admin/pools"),
      get: (type: string) => req<PoolConfig>("GET", `/v1/admin/pools/${enc(type)}`),
      put: (
        type: string,
        cfg: Pick<PoolConfig, "concurrency" | "timeoutMs"> & Partial<Omit<PoolConfig, "type" | "paused">>,
      ) => req<PoolConfig>("PUT", `/v1/admin/pools/${enc(type)}`, cfg),
      /** JSON Merge Patch of the pool's config; null resets a field to its default. */
      patch: (type: string, patch: { [K in keyof Omit<PoolConfig, "type" | "paused">]?: PoolConfig[K] | null }) =>
        req<PoolConfig>("PATCH", `/v1/admin/pools/${enc(type)}`, patch),
      /** Stop claiming this type (running work finishes; nothing is lost), and start again. */
      pause: (type: string) => req<PoolConfig>("POST", `/v1/admin/pools/${enc(type)}/pause`),
      resume: (type: string) => req<PoolConfig>("POST", `/v1/admin/pools/${enc(type)}/resume`),
    },
    stats: () => req<Stats>("GET", "/v1/admin/stats"),
    executors: () => req<{ data: Array<Record<string, unknown>> }>("GET", "/v1/admin/executors"),
    /** After a key rotation: re-seal every secret under FAIRWAY_SECRETS_KEY. */
    reencryptSecrets: () =>
      req<{ keyId: string; reencrypted: number; unreadable: number }>("POST", "/v1/admin/secrets/reencrypt"),
  };
}

export type FairwayClient = ReturnType<typeof createClient>;
export type FairwayAdminClient = ReturnType<typeof createAdminClient>;

const iso = (d: string | Date) => (d instanceof Date ? d.toISOString() : d);

function normalise<T extends { schedule?: unknown }>(input: T): T {
  const s = input.schedule as { at?: unknown } | null | undefined;
  if (s && s.at instanceof Date) return { ...input, schedule: { at: s.at.toISOString() } };
  return input;
}
