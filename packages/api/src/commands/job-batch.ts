// POST /v1/jobs/batch: up to 1,000 creates in one request. Each item is checked as a single create's
// body is (its own 400, 409 or 413 in its result); the valid ones are written in one transaction
// (store createJobs), maxJobs counted exactly in input order, each item's idempotencyKey under the
// rules of the Idempotency-Key header. One request for the API's admission, one set of due triggers
// for the claimer, which shares them with other tenants' work like any backlog.
import { sha256Hex } from "@fairway/core";
import {
  createJobs,
  NOTIFICATION_POOL,
  notifyQuotaExhausted,
  type CreateJobResult,
  type NewJob,
  type TenantRow,
} from "@fairway/store";
import { announceWork } from "../announce.ts";
import type { JobTraceContext } from "../env.ts";
import { ApiError, fromZod } from "../errors.ts";
import { createJobBody } from "../schemas.ts";
import { jobJson } from "../serialize.ts";
import { prepareJob, type CommandContext } from "./jobs.ts";

type ItemResult =
  | { index: number; status: 200 | 201; job: ReturnType<typeof jobJson> }
  | { index: number; status: number; error: { code: string; message: string; details?: unknown } };

const failed = (index: number, e: ApiError): ItemResult => ({
  index,
  status: e.status,
  error: { code: e.code, message: e.message, ...(e.details === undefined ? {} : { details: e.details }) },
});

/** Every item's outcome, in input order: 201 with the job, 200 with the job an idempotencyKey already
 *  made (the same body), or an error. */
export async function createJobBatch(
  { deps, log }: CommandContext,
  tenant: TenantRow,
  items: unknown[],
  trace: JobTraceContext | null = null,
): Promise<{ results: ItemResult[] }> {
  const now = new Date(deps.now());
  const results: Array<ItemResult | undefined> = new Array(items.length);
  const valid: Array<{ index: number; job: NewJob; idempotencyKey?: string; requestHash?: string; known: boolean }> =
    [];
  for (const [index, item] of items.entries()) {
    try {
      valid.push({ index, ...(await checkItem({ deps, log }, tenant, item, now)) });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      results[index] = failed(index, e);
    }
  }
  // As a single create's (jobs.ts): the batch's producer span with tracing on, else the caller's context.
  const span = deps.tracing?.jobCreate({ tenantId: tenant.id, type: "batch", key: null }) ?? null;
  const kept = span ?? trace;
  if (kept)
    for (const v of valid) {
      v.job.traceparent = kept.traceparent;
      v.job.tracestate = kept.tracestate;
    }
  let written: Awaited<ReturnType<typeof createJobs>>;
  try {
    written = await createJobs(
      deps.db,
      valid.map((v) => ({
        job: v.job,
        opts: {
          maxJobs: tenant.maxJobs,
          poolKnown: v.known,
          idempotencyKey: v.idempotencyKey,
          requestHash: v.requestHash,
        },
      })),
    );
    span?.end(null);
  } catch (err) {
    span?.end(null, "internal_error");
    throw err;
  }
  const types = new Set<string>();
  let refused = false;
  for (const [i, r] of written.entries()) {
    const { index } = valid[i]!;
    results[index] = itemResult(index, r, tenant.maxJobs);
    if (r.kind === "created" && !r.job.cron) types.add(r.job.type);
    if (r.kind === "max_jobs") refused = true;
  }
  for (const type of types) announceWork(deps.coordinator, log, { type, tenantId: tenant.id, dueAt: null }, deps.now());
  if (refused) {
    // tenant.quota_exhausted once for the batch, folded per channel window like every event.
    const made = await notifyQuotaExhausted(deps.db, tenant.id, tenant.maxJobs).catch((err: unknown) => {
      log.warn("quota notification failed", { err });
      return [];
    });
    if (made.length > 0)
      announceWork(deps.coordinator, log, { type: NOTIFICATION_POOL, tenantId: tenant.id, dueAt: null }, deps.now());
  }
  const created = written.filter((r) => r.kind === "created").length;
  log.info("job batch created", { items: items.length, created });
  return { results: results as ItemResult[] };
}

/** One item as a single create checks its body; its idempotencyKey beside the create's fields. */
async function checkItem({ deps }: CommandContext, tenant: TenantRow, item: unknown, now: Date) {
  let idempotencyKey: string | undefined;
  let fields = item;
  if (item !== null && typeof item === "object" && !Array.isArray(item) && "idempotencyKey" in item) {
    const { idempotencyKey: k, ...rest } = item as Record<string, unknown>;
    if (typeof k !== "string" || k.length === 0 || k.length > 200)
      throw new ApiError(400, "validation_error", "idempotencyKey: must be a string of 1-200 characters");
    idempotencyKey = k;
    fields = rest;
  }
  const parsed = createJobBody.safeParse(fields);
  if (!parsed.success) throw fromZod(parsed.error);
  const body = parsed.data;
  if (body.debounce)
    throw new ApiError(
      400,
      "debounce_not_in_batch",
      "debounce: a debounced create folds into its key's pending job one create at a time; send it alone to POST /v1/jobs",
    );
  const { job, pool } = await prepareJob(deps, tenant, body, now);
  const requestHash = idempotencyKey ? await sha256Hex(JSON.stringify(body)) : undefined;
  return { job, idempotencyKey, requestHash, known: pool.known };
}

function itemResult(index: number, r: CreateJobResult, maxJobs: number): ItemResult {
  if (r.kind === "created") return { index, status: 201, job: jobJson(r.job) };
  if (r.kind === "replayed") return { index, status: 200, job: jobJson(r.job) };
  if (r.kind === "idempotency_conflict")
    return failed(
      index,
      new ApiError(409, "idempotency_conflict", "this idempotencyKey was already used with a different job body"),
    );
  return failed(index, new ApiError(409, "max_jobs_exceeded", `this tenant may have at most ${maxJobs} jobs`));
}
