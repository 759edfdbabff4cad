// Node transport: undici's dispatcher API with a keep-alive Agent. Redirects are not followed
// (undici.request never follows them without an interceptor). Connect-time SSRF check: the Agent's
// DNS lookup refuses private, loopback, link-local and metadata addresses, so a hostname that
// resolves — or re-resolves (DNS rebinding) — to one is never connected to.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { Agent, request } from "undici";
import { isForbiddenAddress } from "@fairway/core";
import { MAX_RESPONSE_BYTES, type Transport } from "../transport.ts";

export interface UndiciTransportOptions {
  allowPrivate: boolean;
  /** Keep-alive connections per origin. Default 128. */
  connections?: number;
  /** The DNS resolver every connection goes through (node:dns `lookup` signature). Default
   *  `dns.lookup`; a custom resolver (or a test's fake DNS) is still checked address by address. */
  lookup?: typeof dnsLookup;
}

export function createUndiciTransport(opts: UndiciTransportOptions): Transport & { close(): Promise<void> } {
  const agent = new Agent({
    connections: opts.connections ?? 128,
    keepAliveTimeout: 30_000,
    connect: opts.allowPrivate ? (opts.lookup ? { lookup: opts.lookup } : {}) : { lookup: safeLookup(opts.lookup ?? dnsLookup) },
  });
  const transport = async (req: Parameters<Transport>[0]) => {
    if (!opts.allowPrivate) {
      // A literal IP never goes through DNS lookup, so it is checked here.
      const host = new URL(req.url).hostname.replace(/^\[|\]$/g, "");
      if (isIP(host) && isForbiddenAddress(host)) throw new ForbiddenAddressError(host);
    }
    const res = await request(req.url, {
      method: req.method as "POST",
      headers: req.headers,
      body: req.method === "GET" ? undefined : req.body,
      signal: req.signal,
      dispatcher: agent,
    });
    // A small body of known length is read in one go; anything else is streamed and cut at the limit
    // (async iteration costs more per response than the rest of reading it).
    const length = Number(res.headers["content-length"]);
    const body = length <= MAX_RESPONSE_BYTES ? await res.body.text() : await readLimited(res.body);
    return {
      status: res.statusCode,
      header: (name: string) => {
        const v = res.headers[name.toLowerCase()];
        return Array.isArray(v) ? v[0] : (v ?? null);
      },
      body,
    };
  };
  return Object.assign(transport, { close: () => agent.close() });
}

export class ForbiddenAddressError extends Error {
  code = "EFORBIDDEN";
  constructor(address: string) {
    super(`target resolves to a forbidden address (${address})`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Wraps a resolver so that no forbidden address ever reaches the socket: if any answer is
 *  forbidden the whole lookup fails (an attacker's name may mix public and private answers). */
const safeLookup = (resolve: typeof dnsLookup) => (hostname: string, options: object, callback: LookupCallback): void => {
  resolve(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, "");
    const list = addresses as LookupAddress[];
    const bad = list.find((a) => isForbiddenAddress(a.address));
    if (bad) return callback(new ForbiddenAddressError(bad.address), "");
    const all = (options as { all?: boolean }).all;
    if (all) return callback(null, list);
    callback(null, list[0].address, list[0].family);
  });
};

async function readLimited(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < MAX_RESPONSE_BYTES) chunks.push(chunk);
    size += chunk.length;
    if (size >= MAX_RESPONSE_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString("utf8");
}
