// The platform fetch as a transport (Cloudflare Workers; also works on Node, slower). Redirects are
// never followed: `redirect: "manual"` hands the 3xx back, and the retry table dead-letters it.
import { MAX_RESPONSE_BYTES, RunAbort, type CancelSignal, type Transport } from "./transport.ts";

export function createFetchTransport(fetchImpl: typeof fetch = fetch): Transport {
  return async (req) => {
    const res = await fetchImpl(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body ?? undefined,
      redirect: "manual",
      signal: abortSignal(req.signal),
    });
    const { text, truncated } = await readLimited(res, req.maxResponseBytes ?? MAX_RESPONSE_BYTES);
    return {
      status: res.status,
      header: (n) => res.headers.get(n),
      headers: () => {
        const all: Record<string, string> = {};
        res.headers.forEach((v, k) => {
          all[k] = v;
        });
        return all;
      },
      body: text,
      truncated,
    };
  };
}

/** fetch takes only a real AbortSignal: the executor's RunAbort carries one, made on request. */
function abortSignal(s: CancelSignal): AbortSignal {
  if (s instanceof AbortSignal) return s;
  if (s instanceof RunAbort) return s.signal;
  const c = new AbortController();
  if (s.aborted) c.abort();
  else s.addEventListener("abort", () => c.abort());
  return c.signal;
}

async function readLimited(res: Response, max: number): Promise<{ text: string; truncated: boolean }> {
  if (!res.body) return { text: "", truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size <= max) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => {});
  const all = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.byteLength;
  }
  return { text: new TextDecoder().decode(all.subarray(0, max)), truncated: size > max };
}
