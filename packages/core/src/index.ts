// @fairway/core: pure logic shared by every package; no I/O, runs in Node and Workers.
export {
  BACKFILL_MAX_FIRES,
  COST_EWMA_ALPHA,
  DEBOUNCE_BOUNDS,
  DEFAULT_CATCHUP_WINDOW_MS,
  DEFAULT_COST_MS,
  DEFAULT_POOL_SETTINGS,
  DEFAULT_RETRY,
  TENANT_BOUNDS,
} from "./defaults.ts";
export type { AttemptRequest, DeliveryResult, HttpMethod, JobStatus, WebhookTarget } from "./types.ts";
export { type FireBudget, firesBetween, parseCron, validateTimezone } from "./cron.ts";
export { scheduleInWords } from "./schedule-words.ts";
export { decideRetry, parseRetryAfter } from "./retry.ts";
export { allocate } from "./fairshare.ts";
export { generateSigningSecret, signWebhook, signWebhookSync } from "./signing.ts";
export { BoundedMap } from "./bounded-map.ts";
export { FailedAuthLimiter } from "./failed-auth.ts";
export { checkTargetUrl, isForbiddenAddress, isPrivateHost } from "./ssrf.ts";
export { isStorableText, storableText } from "./text.ts";
export { newId, randomToken, sha256Hex, ulid } from "./ids.ts";
export { createLogger, silentLogger, type Logger, type LogLevel } from "./log.ts";
export {
  backlogSupersede,
  EXCLUSIVE_LOOKAHEAD_MS,
  MISFIRE_GRACE_MS,
  planFires,
  type CronJobState,
} from "./schedule.ts";
export { formatSpread, maxSpreadMs, nextShiftedFires, parseSpread, spreadOffsetMs } from "./spread.ts";
export {
  SECRET_NAME,
  redactSecretFragments,
  substituteInJson,
  substituteSecrets,
  targetSecretRefs,
} from "./secret-refs.ts";
export {
  decryptSecret,
  encryptSecret,
  generateSecretsKey,
  loadSecretsKeyring,
  type SecretsKeyring,
} from "./secrets-crypto.ts";
export { constantTimeEqual, mac, signToken, verifyToken } from "./signed-token.ts";
export {
  createPortalLink,
  createPortalSession,
  currentEpoch,
  PORTAL_LINK_DEFAULT_TTL_S,
  PORTAL_LINK_MAX_TTL_S,
  PORTAL_LINK_MIN_TTL_S,
  verifyPortalLink,
  verifyPortalSession,
  type PortalClaims,
} from "./portal-link.ts";
export { loggablePath } from "./loggable-path.ts";
export { parsePortalOrigins } from "./portal-origins.ts";
export { DEFAULT_PORTAL_TITLE, parsePortalBrand, portalCss, type PortalBrand } from "./portal-brand.ts";
export { publicOrigin } from "./public-origin.ts";
