// The SDK's hand-written types against the API's zod schemas, checked by `npm run typecheck`: a field
// added, removed or retyped on either side breaks the build, so the two cannot drift. (Type-only: not
// a vitest file.)
import type { z } from "zod";
import type * as responses from "../../packages/api/src/responses.ts";
import type * as schemas from "../../packages/api/src/schemas.ts";
import type {
  ApiKey,
  Attempt,
  Backfill,
  CreateChannelInput,
  CreateJobInput,
  DeadLetterReplay,
  Job,
  JobBatchResult,
  KeyDefaultsPatch,
  KeyInfo,
  KeyOverride,
  KeyPolicy,
  Notification,
  NotificationChannel,
  Page,
  PoolConfig,
  Quota,
  RerunInput,
  Stats,
  Tenant,
  TenantQuotas,
  Plan,
  CreatePlanInput,
  Trigger,
} from "@fairway/sdk";

type Expect<T extends true> = T;
/** Dates: the SDK also accepts a Date for schedule.at (sent as ISO); compare on the wire form. */
type AtAsString<S> = S extends { at: unknown } ? { at: string } : S;
type Wire<T> = { [K in keyof T]: K extends "schedule" ? AtAsString<T[K]> : T[K] };
/** Each assignable to the other: every field on both sides, with compatible types. */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** What the SDK lets you send, the API accepts. */
type Sendable<A, B> = [A] extends [B] ? true : false;

/** @public checked by the compiler, imported by nothing */
export type Checks = [
  // Responses: the API's shapes.
  Expect<Mutual<Job, z.output<typeof responses.jobResponse>>>,
  Expect<Mutual<Trigger, z.output<typeof responses.triggerResponse>>>,
  Expect<Sendable<JobBatchResult, z.output<typeof responses.jobBatchResponse>>>,
  Expect<Mutual<Attempt, z.output<typeof responses.attemptResponse>>>,
  Expect<Mutual<Tenant, z.output<typeof responses.tenantResponse>>>,
  Expect<Mutual<Tenant & { signingSecret: string }, z.output<typeof responses.createdTenantResponse>>>,
  Expect<Mutual<ApiKey, z.output<typeof responses.apiKeyResponse>>>,
  Expect<Mutual<Plan, z.output<typeof responses.planResponse>>>,
  Expect<Mutual<Quota, z.output<typeof responses.quotaResponse>>>,
  Expect<Mutual<PoolConfig, z.output<typeof responses.poolResponse>>>,
  Expect<Mutual<Page<Job>, z.output<ReturnType<typeof responses.pageOf<typeof responses.jobResponse>>>>>,
  Expect<Mutual<Stats, z.output<typeof responses.statsResponse>>>,
  Expect<Mutual<DeadLetterReplay, z.output<typeof responses.replayDeadLettersResponse>>>,
  Expect<Mutual<NotificationChannel, z.output<typeof responses.channelResponse>>>,
  Expect<Mutual<Notification, z.output<typeof responses.notificationResponse>>>,
  Expect<Mutual<KeyPolicy, z.output<typeof responses.keyPolicyResponse>>>,
  Expect<Mutual<KeyInfo, z.output<typeof responses.keyInfoResponse>>>,
  Expect<Mutual<Backfill, z.output<typeof responses.backfillResponse>>>,
  Expect<Mutual<Page<KeyInfo>, z.output<ReturnType<typeof responses.pageOf<typeof responses.keyInfoResponse>>>>>,
  // Requests: what the SDK lets you send is what the API accepts (its input side, before defaults).
  // The create schema parses a schedule as one object (so its errors can name the clash), so the SDK's
  // union of three shapes is checked one way. PATCH bodies are merge patches, validated after merging.
  Expect<Sendable<Wire<CreateJobInput>, z.input<typeof schemas.createJobBody>>>,
  Expect<Sendable<RerunInput, z.input<typeof schemas.rerunTriggerBody>>>,
  Expect<Mutual<{ id?: string; name: string; plan?: string } & TenantQuotas, z.input<typeof schemas.createTenantBody>>>,
  Expect<Mutual<CreatePlanInput, z.input<typeof schemas.planState>>>,
  Expect<Mutual<CreateChannelInput, z.input<typeof schemas.createChannelBody>>>,
  Expect<Mutual<KeyOverride, z.input<typeof schemas.putKeyBody>>>,
  Expect<Mutual<KeyDefaultsPatch, z.input<typeof schemas.patchKeyDefaultsBody>>>,
];
