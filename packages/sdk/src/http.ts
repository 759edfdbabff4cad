// The SDK's one HTTP path: JSON in, JSON out, every non-2xx as a FairwayError with the API's code.
// 429 and 503 are retried (the request was not done, or the server is briefly unable), waiting what
// Retry-After asks, else an exponential backoff; other failures are returned to the caller at once.
import { errorFor, FairwayRateLimitError } from "./errors.ts";

export interface HttpOptions {
  baseUrl: string;
  token: string;
  fetch?: typeof fetch;
  /** Retries of a 429 or 503 answer. Default 3; 0 disables. */
  maxRetries?: number;
  /** The longest wait between two tries, whatever Retry-After says. Default 30 000 ms. */
  maxRetryDelayMs?: number;
}

export type Requester = <T>(
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<T>;

const RETRIED = new Set([429, 503]);

/** Retry-After as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | null, nowMs = Date.now()): number | null {
  if (!value) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

export function requester(opts: HttpOptions): Requester {
  const base = opts.baseUrl.replace(/\/+$/, "");
  const doFetch = opts.fetch ?? ((...a: Parameters<typeof fetch>) => fetch(...a));
  const maxRetries = opts.maxRetries ?? 3;
  const maxDelay = opts.maxRetryDelayMs ?? 30_000;
  return async <T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await doFetch(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${opts.token}`,
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
            ...headers,
          },
          body: body !== undefined ? JSON.stringify(body) : undefined,
        });
      } catch (err) {
        throw errorFor(0, "network_error", `could not reach Fairway at ${base}: ${(err as Error).message}`);
      }
      const text = await res.text();
      let json: unknown = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: reported below by status
      }
      if (res.ok) return json as T;
      const wait = retryAfterMs(res.headers.get("retry-after"));
      if (RETRIED.has(res.status) && attempt < maxRetries) {
        await new Promise((r) => setTimeout(r, Math.min(maxDelay, wait ?? 250 * 2 ** attempt)));
        continue;
      }
      const e = (json as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
      const err = errorFor(
        res.status,
        e?.code ?? "http_error",
        e?.message ?? `HTTP ${res.status}`,
        e?.details,
        res.headers.get("x-request-id") ?? undefined,
      );
      if (err instanceof FairwayRateLimitError) err.retryAfterMs = wait;
      throw err;
    }
  };
}

/** A query string; an array value repeats its parameter (`tag=a:1&tag=b:2`). */
export const qs = (params: Record<string, string | number | boolean | string[] | undefined>) => {
  const entries = Object.entries(params).flatMap(([k, v]) =>
    v === undefined ? [] : Array.isArray(v) ? v.map((x) => [k, x] as const) : [[k, v] as const],
  );
  return entries.length ? `?${entries.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join("&")}` : "";
};

/** Every item of a cursor-paginated list, fetching pages as the loop asks for them. */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ data: T[]; nextCursor: string | null }>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.data;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}
