// Server configuration from the environment. Every field documents its default.
import { z } from "zod";
import { parsePortalOrigins } from "@fairway/core";
import { parsePortalBrand, type PortalBrand } from "@fairway/core";
import { StartupError } from "./startup-error.ts";

const bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

// postgres.js's own syntax, which WHATWG URL parsing rejects when it lists several hosts
// (postgres://h1:5432,h2:5432/db?target_session_attrs=read-write, for a failover pair).
const pgUrl = z
  .string()
  .regex(
    /^postgres(ql)?:\/\/[^/\s]+\/\S*$/,
    "must be a postgres://user@host:port/database URL (hosts may be listed host1:port,host2:port)",
  );

const httpUrl = z.string().regex(/^https?:\/\/\S+$/, "must be an http:// or https:// URL");
const otlpProtocol = z.enum(["http/protobuf", "http/json"], {
  error: "must be http/protobuf or http/json (gRPC is not supported)",
});

/** A whole number from min to max (no max: or more) read from a string; every refusal names the unit
 *  and the range, e.g. PORT=abc → "must be a whole number (a TCP port) from 0 to 65535". */
function wholeNumber(min: number, max: number | null, unit: string) {
  const what = `must be a whole number (${unit}) ${max === null ? `of ${min} or more` : `from ${min} to ${max}`}`;
  const n = z.coerce.number({ error: what }).int(what).min(min, what);
  return max === null ? n : n.max(max, what);
}

const schema = z
  .object({
    /** Postgres URL; unset = embedded PostgreSQL started by Fairway, its cluster under FAIRWAY_DATA_DIR. */
    DATABASE_URL: pgUrl.optional(),
    /** Postgres itself when DATABASE_URL is a transaction pooler (PgBouncer, Supavisor, RDS Proxy): the
     *  migrations and their session lock run here. Unset = DATABASE_URL (refused if that is a pooler). */
    DATABASE_DIRECT_URL: pgUrl.optional(),
    /** Named prepared statements on DATABASE_URL. Default: on, off behind a transaction pooler (PgBouncer
     *  before 1.21 has none; set true for 1.21+ with max_prepared_statements). */
    FAIRWAY_DB_PREPARE: bool.optional(),
    /** On a Citus coordinator: distribute the tables by tenant across its workers after the migrations
     *  (docs/scaling.md). Refused where the citus extension is absent. Default false. */
    FAIRWAY_DISTRIBUTE: bool.default(false),
    /** redis:// URL for self-hosted Redis coordination. */
    REDIS_URL: z.string().optional(),
    UPSTASH_REDIS_REST_URL: z.string().url().optional(),
    UPSTASH_REDIS_REST_TOKEN: z.string().optional(),
    /** Prefix of every Redis key (either driver), so deployments can share one Redis. Default fairway: */
    FAIRWAY_REDIS_PREFIX: z.string().max(100).default("fairway:"),
    /** Admin bearer token; unset = generated on first start, stored in the data dir, printed once. */
    FAIRWAY_ADMIN_TOKEN: z.string().min(16).optional(),
    /** HTTP port. Default 8787. */
    PORT: wholeNumber(0, 65535, "a TCP port").default(8787),
    /** Listen address. Default 127.0.0.1 (set 0.0.0.0 to expose). */
    HOST: z.string().default("127.0.0.1"),
    /** Embedded database and generated token live here. Default ./.fairway */
    FAIRWAY_DATA_DIR: z.string().default("./.fairway"),
    /** Port of the embedded PostgreSQL (127.0.0.1 only). Default: the last one used if free, else any free port. */
    FAIRWAY_EMBEDDED_PG_PORT: wholeNumber(1, 65535, "a TCP port").optional(),
    /** all | api | executor. Default all. */
    FAIRWAY_ROLE: z.enum(["all", "api", "executor"]).default("all"),
    /** Let webhooks reach loopback/private addresses (tests, local demos). Default false. */
    FAIRWAY_ALLOW_PRIVATE_TARGETS: bool.default(false),
    /** Per-tenant API requests per second (0 = off). Default 1000. */
    FAIRWAY_API_RATE_PER_SECOND: z.coerce
      .number({ error: "must be a number of requests per second, 0 (off) or more" })
      .min(0, "must be a number of requests per second, 0 (off) or more")
      .default(1000),
    /** Tenant-fair admission of API requests (docs/security.md, "Admission"). Default true. */
    FAIRWAY_API_ADMISSION: bool.default(true),
    /** Executor idle poll. Default 250 ms. */
    FAIRWAY_POLL_MS: wholeNumber(10, 10_000, "milliseconds").default(250),
    /** Graceful stop budget for in-flight work on SIGTERM. Default 10000 ms. */
    FAIRWAY_GRACE_MS: wholeNumber(0, null, "milliseconds").default(10_000),
    /** debug | info | warn | error. Default info. */
    FAIRWAY_LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
    /** Seals tenant secrets: 32 bytes, base64 (openssl rand -base64 32). Unset = generated once and kept
     *  in the data dir (every server sharing a database must then be given the same key). */
    FAIRWAY_SECRETS_KEY: z.string().optional(),
    /** The key before a rotation: still opens secrets until POST /v1/admin/secrets/reencrypt re-seals them. */
    FAIRWAY_SECRETS_KEY_PREVIOUS: z.string().optional(),
    /** Origins that may embed a tenant portal view in an iframe, space- or comma-separated. Default none. */
    FAIRWAY_PORTAL_ORIGINS: z
      .string()
      .default("")
      .transform((raw, ctx) => {
        const r = parsePortalOrigins(raw);
        if (!r.ok) ctx.addIssue({ code: "custom", message: r.message });
        return r.ok ? r.origins : [];
      }),
    /** The portal's name in its header and titles, in place of "Fairway" (at most 60 characters). */
    FAIRWAY_PORTAL_TITLE: z.string().optional(),
    /** The portal's accent colour for buttons and links, #rrggbb, dark enough for 4.5:1 on white. */
    FAIRWAY_PORTAL_ACCENT: z.string().optional(),
    /** Postgres pool size. Default 10. */
    FAIRWAY_DB_POOL: wholeNumber(1, 200, "connections").default(10),
    /** An API request still waiting on Postgres this long, while Postgres does not answer a probe either
     *  (a failover, a restart), gets 503 database_unavailable with Retry-After. Default 5000 ms. */
    FAIRWAY_DB_WAIT_MS: wholeNumber(100, 600_000, "milliseconds").default(5_000),
    /** A statement, transaction or connection wait on Postgres with neither an answer nor an error this
     *  long is failed and the connection pool replaced (a connection gone silent). Default 15000 ms. */
    FAIRWAY_DB_DEADLINE_MS: wholeNumber(1000, 600_000, "milliseconds").default(15_000),
    /** An executor loop whose step runs this long is restarted, logged and counted. Default 30000 ms. */
    FAIRWAY_LOOP_STALL_MS: wholeNumber(1000, 600_000, "milliseconds").default(30_000),
    /** /readyz answers 503 once this process's executor has ended no claim pass for this long. Default 10000 ms. */
    FAIRWAY_READY_STALL_MS: wholeNumber(1000, 600_000, "milliseconds").default(10_000),
    /** Executor heartbeat interval. Default 5000 ms. */
    FAIRWAY_HEARTBEAT_MS: wholeNumber(100, 60_000, "milliseconds").default(5_000),
    /** An executor silent this long is lost: its leases are reaped at once. Default 30000 ms. */
    FAIRWAY_HEARTBEAT_TIMEOUT_MS: wholeNumber(500, 3_600_000, "milliseconds").default(30_000),
    /** A second token that may read /metrics (besides the admin token). */
    FAIRWAY_METRICS_TOKEN: z.string().min(16).optional(),
    /** SMTP server for email notification channels, e.g. smtps://user:pass@smtp.example.com:465. Unset =
     *  email channels are refused at creation. */
    FAIRWAY_SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\//, "must start with smtp:// or smtps://")
      .optional(),
    /** Or an HTTP mail API for them (Resend's `POST /emails`, e.g. https://api.resend.com) and its key. */
    FAIRWAY_MAIL_API_URL: z
      .string()
      .regex(/^https?:\/\/[^/]/, "must be an http:// or https:// URL, e.g. https://api.resend.com")
      .optional(),
    FAIRWAY_MAIL_API_KEY: z.string().min(1).optional(),
    /** The From address of notification emails. Default fairway@localhost. */
    FAIRWAY_MAIL_FROM: z.string().min(3).default("fairway@localhost"),
    /** Per-tenant metric series are kept for the busiest this many tenants. Default 20. */
    FAIRWAY_METRICS_TOP_TENANTS: wholeNumber(0, 1000, "tenants").default(20),
    /** OTLP/HTTP collector base URL: traces go to <it>/v1/traces. Unset (and no _TRACES_ENDPOINT):
     *  tracing is off and no OpenTelemetry module is loaded (docs/observability.md). */
    OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
    /** The traces URL itself, used as given; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
    /** OTLP encoding: http/protobuf (default) or http/json. */
    OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.optional(),
    /** The same for traces only; wins over OTEL_EXPORTER_OTLP_PROTOCOL. */
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
    /** Headers on every export, `name=value` pairs joined by commas (values URL-encoded), e.g. an API key. */
    OTEL_EXPORTER_OTLP_HEADERS: z
      .string()
      .regex(/^\s*[^=,\s]+\s*=[^,]*(,\s*[^=,\s]+\s*=[^,]*)*$/, "must be name=value pairs joined by commas")
      .optional(),
    /** service.name of the spans. Default fairway. */
    OTEL_SERVICE_NAME: z.string().min(1).max(200).default("fairway"),
    /** The OpenTelemetry SDK's sampler (read by the SDK). Default parentbased_always_on. */
    OTEL_TRACES_SAMPLER: z
      .enum([
        "always_on",
        "always_off",
        "traceidratio",
        "parentbased_always_on",
        "parentbased_always_off",
        "parentbased_traceidratio",
      ])
      .optional(),
    /** The ratio of the traceidratio samplers, 0 to 1 (read by the SDK). Default 1. */
    OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
    /** true: tracing off whatever the endpoint says (the OpenTelemetry standard switch). Default false. */
    OTEL_SDK_DISABLED: bool.default(false),
    /** The dashboard links a trigger's trace id through this URL, `{traceId}` replaced, e.g.
     *  https://jaeger.example.com/trace/{traceId}. Unset: the id is shown without a link. */
    FAIRWAY_TRACE_URL_TEMPLATE: httpUrl
      .refine((v) => v.includes("{traceId}"), "must contain {traceId}, where the trace id goes")
      .optional(),
  })
  .refine((c) => !c.DATABASE_DIRECT_URL || c.DATABASE_URL, {
    message:
      "DATABASE_DIRECT_URL goes with DATABASE_URL (the pooler); without DATABASE_URL Fairway runs its embedded PostgreSQL",
    path: ["DATABASE_DIRECT_URL"],
  })
  .refine((c) => Boolean(c.UPSTASH_REDIS_REST_URL) === Boolean(c.UPSTASH_REDIS_REST_TOKEN), {
    // Half of Upstash would otherwise fall back to REDIS_URL or to in-process coordination, silently.
    message: "set both UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, or neither",
    path: ["UPSTASH_REDIS_REST_TOKEN"],
  })
  .refine((c) => Boolean(c.FAIRWAY_MAIL_API_URL) === Boolean(c.FAIRWAY_MAIL_API_KEY), {
    message: "set both FAIRWAY_MAIL_API_URL and FAIRWAY_MAIL_API_KEY, or neither",
    path: ["FAIRWAY_MAIL_API_KEY"],
  })
  .superRefine((c, ctx) => {
    const r = parsePortalBrand(c.FAIRWAY_PORTAL_TITLE, c.FAIRWAY_PORTAL_ACCENT);
    if (!r.ok)
      ctx.addIssue({
        code: "custom",
        message: r.message.replace(/^FAIRWAY_PORTAL_\w+: /, ""),
        path: [r.message.split(":")[0]!],
      });
  })
  .refine((c) => !(c.FAIRWAY_SMTP_URL && c.FAIRWAY_MAIL_API_URL), {
    message: "set FAIRWAY_SMTP_URL or FAIRWAY_MAIL_API_URL for email, not both",
    path: ["FAIRWAY_MAIL_API_URL"],
  });

export type Config = z.infer<typeof schema>;

export function loadConfig(env: Record<string, string | undefined>): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const r = schema.safeParse(cleaned);
  if (!r.success) {
    // One line: a start that fails prints exactly what to change.
    const problems = r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}${echo(String(i.path[0]), cleaned)}`);
    throw new StartupError(`invalid configuration: ${problems.join("; ")}`);
  }
  return r.data;
}

/** Variables that may hold credentials are never echoed back. */
const SECRET = /URL|TOKEN|KEY|SECRET|PASSWORD|HEADERS|ENDPOINT|TEMPLATE/;

function echo(key: string, env: Record<string, string | undefined>): string {
  const v = env[key];
  if (v === undefined || SECRET.test(key)) return "";
  return ` (got ${JSON.stringify(v.length > 60 ? v.slice(0, 60) + "…" : v)})`;
}

/** The portal's name and accent, as FAIRWAY_PORTAL_TITLE and FAIRWAY_PORTAL_ACCENT give them (the
 *  schema has checked both). */
export function portalBrandOf(cfg: Config): PortalBrand {
  const r = parsePortalBrand(cfg.FAIRWAY_PORTAL_TITLE, cfg.FAIRWAY_PORTAL_ACCENT);
  if (!r.ok) throw new StartupError(`invalid configuration: ${r.message}`);
  return r.brand;
}
