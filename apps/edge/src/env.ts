// The Worker's bindings and settings (wrangler.toml [vars], secrets, the Hyperdrive binding), read
// once per invocation into a typed config. Every field documents its default.
import {
  createLogger,
  loadSecretsKeyring,
  parsePortalBrand,
  parsePortalOrigins,
  type Logger,
  type LogLevel,
  type PortalBrand,
  type SecretsKeyring,
} from "@fairway/core";
import type { HttpMailApi } from "@fairway/executor";

export interface Env {
  /** Hyperdrive binding to Postgres (wrangler.toml [[hyperdrive]]). */
  HYPERDRIVE: { connectionString: string };
  /** Secret. Admin bearer token for /v1/admin/*. Required (at least 16 characters). */
  FAIRWAY_ADMIN_TOKEN?: string;
  /** Secrets. Upstash REST endpoint and token; unset = no shared coordination (see coordinatorFor). */
  UPSTASH_REDIS_REST_URL?: string;
  UPSTASH_REDIS_REST_TOKEN?: string;
  /** Prefix of every Redis key, so deployments can share one Upstash database. Default "fairway:". */
  FAIRWAY_REDIS_PREFIX?: string;
  /** "true" lets webhooks reach loopback/private addresses (local tests only). Default "false". */
  FAIRWAY_ALLOW_PRIVATE_TARGETS?: string;
  /** How long one scheduled invocation claims work. Default 50000 ms (most of the cron minute). */
  FAIRWAY_RUN_MS?: string;
  /** After that, how long running webhooks may finish before they are aborted and released. Default 5000 ms. */
  FAIRWAY_GRACE_MS?: string;
  /** Idle poll of the executor loop. Default 1000 ms (Upstash REST has no push wake-ups). */
  FAIRWAY_POLL_MS?: string;
  /** Per-tenant API requests per second (0 = off). Default 1000. */
  FAIRWAY_API_RATE_PER_SECOND?: string;
  /** debug | info | warn | error. Default info. */
  FAIRWAY_LOG_LEVEL?: string;
  /** Secret. Seals tenant secrets: 32 bytes, base64 (openssl rand -base64 32). Required. */
  FAIRWAY_SECRETS_KEY?: string;
  /** Secret. The key before a rotation, until POST /v1/admin/secrets/reencrypt has re-sealed every secret. */
  FAIRWAY_SECRETS_KEY_PREVIOUS?: string;
  /** Secret. A token that may read /metrics besides the admin token (at least 16 characters). */
  FAIRWAY_METRICS_TOKEN?: string;
  /** Per-tenant series on /metrics for the busiest this many tenants. Default 20. */
  FAIRWAY_METRICS_TOP_TENANTS?: string;
  /** Origins that may embed a tenant portal view in an iframe, space- or comma-separated. Default none. */
  FAIRWAY_PORTAL_ORIGINS?: string;
  FAIRWAY_PORTAL_TITLE?: string;
  FAIRWAY_PORTAL_ACCENT?: string;
  /** An HTTP mail API for email notification channels (Resend's `POST /emails`, e.g.
   *  https://api.resend.com) and, a secret, its key. Unset = email channels are refused. */
  FAIRWAY_MAIL_API_URL?: string;
  FAIRWAY_MAIL_API_KEY?: string;
  /** The From address of notification emails. Default fairway@localhost. */
  FAIRWAY_MAIL_FROM?: string;
}

export interface EdgeConfig {
  databaseUrl: string;
  adminToken: string;
  upstash: { url: string; token: string; prefix: string } | null;
  allowPrivateTargets: boolean;
  runMs: number;
  graceMs: number;
  pollMs: number;
  apiRatePerSecond: number;
  secretsKey: SecretsKeyring;
  metricsToken: string | undefined;
  metricsTopTenants: number;
  portalOrigins: string[];
  portalBrand: PortalBrand;
  mailApi: HttpMailApi | null;
  log: Logger;
}

/** A misconfigured deployment fails every request loudly rather than running half-configured. */
export class ConfigError extends Error {}

const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

export async function readConfig(env: Env): Promise<EdgeConfig> {
  if (!env.HYPERDRIVE?.connectionString)
    throw new ConfigError("the HYPERDRIVE binding is missing (wrangler.toml [[hyperdrive]])");
  const adminToken = env.FAIRWAY_ADMIN_TOKEN?.trim() ?? "";
  if (adminToken.length < 16)
    throw new ConfigError("FAIRWAY_ADMIN_TOKEN must be set (wrangler secret put), at least 16 characters");
  const url = env.UPSTASH_REDIS_REST_URL?.trim();
  const token = env.UPSTASH_REDIS_REST_TOKEN?.trim();
  if (Boolean(url) !== Boolean(token))
    throw new ConfigError("set both UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, or neither");
  if (!env.FAIRWAY_SECRETS_KEY?.trim())
    throw new ConfigError(
      "FAIRWAY_SECRETS_KEY must be set (wrangler secret put): 32 bytes, base64, from openssl rand -base64 32",
    );
  let secretsKey: SecretsKeyring;
  try {
    secretsKey = await loadSecretsKeyring(env.FAIRWAY_SECRETS_KEY, env.FAIRWAY_SECRETS_KEY_PREVIOUS?.trim() || null);
  } catch (err) {
    throw new ConfigError(err instanceof Error ? err.message : String(err));
  }
  const level = (env.FAIRWAY_LOG_LEVEL ?? "info") as LogLevel;
  if (!LEVELS.includes(level)) throw new ConfigError(`FAIRWAY_LOG_LEVEL must be one of ${LEVELS.join(", ")}`);
  const portal = parsePortalOrigins(env.FAIRWAY_PORTAL_ORIGINS);
  if (!portal.ok) throw new ConfigError(portal.message);
  const brand = parsePortalBrand(env.FAIRWAY_PORTAL_TITLE, env.FAIRWAY_PORTAL_ACCENT);
  if (!brand.ok) throw new ConfigError(brand.message);
  return {
    databaseUrl: env.HYPERDRIVE.connectionString,
    adminToken,
    upstash: url && token ? { url, token, prefix: env.FAIRWAY_REDIS_PREFIX || "fairway:" } : null,
    allowPrivateTargets: env.FAIRWAY_ALLOW_PRIVATE_TARGETS === "true",
    runMs: intVar(env, "FAIRWAY_RUN_MS", 50_000, 0, 14 * 60_000),
    graceMs: intVar(env, "FAIRWAY_GRACE_MS", 5_000, 0, 60_000),
    pollMs: intVar(env, "FAIRWAY_POLL_MS", 1_000, 10, 10_000),
    apiRatePerSecond: intVar(env, "FAIRWAY_API_RATE_PER_SECOND", 1000, 0, 1_000_000),
    secretsKey,
    metricsToken: metricsTokenOf(env),
    metricsTopTenants: intVar(env, "FAIRWAY_METRICS_TOP_TENANTS", 20, 0, 1000),
    portalOrigins: portal.origins,
    portalBrand: brand.brand,
    mailApi: mailApiOf(env),
    log: createLogger({ level }),
  };
}

function mailApiOf(env: Env): HttpMailApi | null {
  const url = env.FAIRWAY_MAIL_API_URL?.trim();
  const apiKey = env.FAIRWAY_MAIL_API_KEY?.trim();
  if (Boolean(url) !== Boolean(apiKey))
    throw new ConfigError("set both FAIRWAY_MAIL_API_URL and FAIRWAY_MAIL_API_KEY (wrangler secret put), or neither");
  if (!url || !apiKey) return null;
  if (!/^https?:\/\/[^/]/.test(url))
    throw new ConfigError("FAIRWAY_MAIL_API_URL must be an http:// or https:// URL, e.g. https://api.resend.com");
  return { url, apiKey, from: env.FAIRWAY_MAIL_FROM?.trim() || "fairway@localhost" };
}

function metricsTokenOf(env: Env): string | undefined {
  const token = env.FAIRWAY_METRICS_TOKEN?.trim();
  if (!token) return undefined;
  if (token.length < 16) throw new ConfigError("FAIRWAY_METRICS_TOKEN must be at least 16 characters");
  return token;
}

function intVar(env: Env, name: keyof Env, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got ${JSON.stringify(raw)}`);
  return n;
}
