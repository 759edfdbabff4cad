// Every failure the SDK reports is a FairwayError carrying the API's stable `code`; the common cases
// have their own subclass, so callers can `instanceof` instead of comparing strings.

/** Codes the API answers with (see /openapi.json); others may be added, so `string` stays possible. */
export type FairwayErrorCode =
  | "validation_error"
  | "invalid_json"
  | "invalid_text"
  | "too_deep"
  | "invalid_cron"
  | "invalid_timezone"
  | "invalid_spread"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "tenant_exists"
  | "idempotency_conflict"
  | "max_jobs_exceeded"
  | "not_dead"
  | "unknown_channel"
  | "email_unavailable"
  | "too_many_channels"
  | "payload_too_large"
  | "rate_limited"
  | "internal_error"
  | "network_error"
  | "http_error"
  | (string & {});

export class FairwayError extends Error {
  constructor(
    readonly status: number,
    readonly code: FairwayErrorCode,
    message: string,
    readonly details?: unknown,
    /** The x-request-id of the failed request, when the server answered. */
    readonly requestId?: string,
  ) {
    super(message);
    this.name = "FairwayError";
  }
}

/** 400: the request was refused; `details` lists each invalid field. */
export class FairwayValidationError extends FairwayError {}
/** 401/403: a missing, wrong or revoked key, or a suspended tenant. */
export class FairwayAuthError extends FairwayError {}
/** 404 */
export class FairwayNotFoundError extends FairwayError {}
/** 409: an existing id, a reused Idempotency-Key, a job limit, a replay of a live trigger. */
export class FairwayConflictError extends FairwayError {}
/** 429 after the SDK's own retries ran out; `retryAfterMs` from the last answer. */
export class FairwayRateLimitError extends FairwayError {
  retryAfterMs: number | null = null;
}
/** The server could not be reached (status 0). */
export class FairwayNetworkError extends FairwayError {}

export function errorFor(
  status: number,
  code: string,
  message: string,
  details?: unknown,
  requestId?: string,
): FairwayError {
  const Cls =
    status === 0
      ? FairwayNetworkError
      : status === 400
        ? FairwayValidationError
        : status === 401 || status === 403
          ? FairwayAuthError
          : status === 404
            ? FairwayNotFoundError
            : status === 409
              ? FairwayConflictError
              : status === 429
                ? FairwayRateLimitError
                : FairwayError;
  const e = new Cls(status, code, message, details, requestId);
  e.name = Cls.name;
  return e;
}
