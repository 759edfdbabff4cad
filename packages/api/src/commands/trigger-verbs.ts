// One trigger, not its whole job: cancel a pending or running trigger, re-run a finished one (with an
// edited payload or body for that run alone), for the API and the dashboard alike.
import {
  cancelTrigger as cancelTriggerRow,
  getJob,
  getTrigger,
  rerunTrigger as rerunTriggerRow,
  type RerunOverride,
  type TenantRow,
} from "@fairway/store";
import { announceWork } from "../announce.ts";
import { ApiError, notFound } from "../errors.ts";
import { payloadBytes } from "../job-input.ts";
import type { CommandContext } from "./jobs.ts";

/** The trigger `cancelled` (reason cancelled_by_user): a pending one never runs, a running one's request
 *  is cut by its executor and its attempt recorded `cancelled`, never retried. 409 trigger_finished for
 *  one that already ended. */
export async function cancelTrigger({ deps, log }: CommandContext, tenantId: string, id: string) {
  const r = await cancelTriggerRow(deps.db, tenantId, id);
  if (!r) throw notFound("trigger");
  if (r.kind === "finished")
    throw new ApiError(
      409,
      "trigger_finished",
      `this trigger already ended ${r.status}; only a pending or running trigger can be cancelled (POST /v1/triggers/${id}/rerun runs it again)`,
    );
  log.info("trigger cancelled", { triggerId: id, was: r.was });
  return (await getTrigger(deps.db, tenantId, id))!;
}

/** A new trigger of the same job (triggeredBy rerun, rerunOf `id`), due now; `override` is what it
 *  sends instead of the job's payload or its request target's body, and the job is unchanged. 409
 *  trigger_not_finished for a pending or running trigger. */
export async function rerunTrigger(
  { deps, log }: CommandContext,
  tenant: TenantRow,
  id: string,
  override: RerunOverride,
) {
  const tenantId = tenant.id;
  const trigger = await getTrigger(deps.db, tenantId, id);
  if (!trigger) throw notFound("trigger");
  const job = await getJob(deps.db, tenantId, trigger.jobId);
  if (!job) throw notFound("trigger");
  checkOverride(override, job.target as RequestTarget | null, tenant.maxPayloadBytes);
  const hasOverride = override.payload !== undefined || override.body !== undefined;
  const r = await rerunTriggerRow(deps.db, tenantId, id, hasOverride ? override : null, new Date(deps.now()));
  if (!r) throw notFound("trigger");
  if (r.kind === "not_finished")
    throw new ApiError(
      409,
      "trigger_not_finished",
      `this trigger is ${r.status}; only a finished trigger can be re-run (POST /v1/triggers/${id}/cancel stops it first)`,
    );
  const t = (await getTrigger(deps.db, tenantId, r.id))!;
  announceWork(deps.coordinator, log, { type: t.type, tenantId, dueAt: null }, deps.now());
  log.info("trigger re-run", { triggerId: id, rerun: t.id, override: hasOverride });
  return t;
}

type RequestTarget = { method?: string; body?: unknown };

/** A payload within the tenant's limit; a body only for a job whose target sends one (a request
 *  target), within the same limit. */
function checkOverride(o: RerunOverride, target: RequestTarget | null, maxBytes: number): void {
  if (o.body !== undefined && target?.body === undefined)
    throw new ApiError(
      400,
      "body_not_allowed",
      target
        ? "body: this job's target sends the Standard Webhooks envelope, not a body of its own; send payload instead"
        : "body: this job runs in an in-process handler and sends no request; send payload instead",
    );
  for (const [field, value] of [
    ["payload", o.payload],
    ["body", o.body],
  ] as const) {
    const size = typeof value === "string" ? new TextEncoder().encode(value).byteLength : payloadBytes(value);
    if (size > maxBytes)
      throw new ApiError(413, "payload_too_large", `${field} is ${size} bytes; this tenant's limit is ${maxBytes}`);
  }
}
