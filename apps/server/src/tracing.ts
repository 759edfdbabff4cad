// Whether this server traces, from the standard OpenTelemetry variables (config.ts). Off unless an
// OTLP endpoint is set: then otel.ts, and through it the SDK, is imported; otherwise nothing of
// OpenTelemetry is loaded, and an attempt pays one branch.
import type { Config } from "./config.ts";
import type { ServerTracing, TracingSettings } from "./tracing-types.ts";

/** Null: tracing is off. */
function tracingSettings(cfg: Config): TracingSettings | null {
  if (cfg.OTEL_SDK_DISABLED) return null;
  const url =
    cfg.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (cfg.OTEL_EXPORTER_OTLP_ENDPOINT ? `${cfg.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "")}/v1/traces` : null);
  if (!url) return null;
  return {
    url,
    protocol: cfg.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? cfg.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf",
    headers: otlpHeaders(cfg.OTEL_EXPORTER_OTLP_HEADERS),
    serviceName: cfg.OTEL_SERVICE_NAME,
    exportDelayMs: 1000,
  };
}

/** OTEL_EXPORTER_OTLP_HEADERS: `name=value` pairs joined by commas, values URL-encoded (the spec's
 *  format; config.ts checked its shape). */
function otlpHeaders(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw) return out;
  for (const pair of raw.split(",")) {
    const i = pair.indexOf("=");
    const name = pair.slice(0, i).trim();
    const value = pair.slice(i + 1).trim();
    try {
      out[name] = decodeURIComponent(value);
    } catch {
      out[name] = value;
    }
  }
  return out;
}

export async function startTracing(cfg: Config): Promise<ServerTracing | null> {
  const s = tracingSettings(cfg);
  if (!s) return null;
  const { startOtel } = await import("./otel.ts");
  return startOtel(s);
}
