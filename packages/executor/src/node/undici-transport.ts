// Node transport: undici's dispatcher API with a keep-alive Agent. Redirects are not followed
// (a dispatcher never follows them without an interceptor). Connect-time SSRF check: the Agent's
// DNS lookup refuses private, loopback, link-local and metadata addresses, so a hostname that
// resolves — or re-resolves (DNS rebinding) — to one is never connected to.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { Agent } from "undici";
import { BoundedMap, isForbiddenAddress } from "@fairway/core";
import {
  MAX_RESPONSE_BYTES,
  type CancelSignal,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from "../transport.ts";

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
    connect: opts.allowPrivate
      ? opts.lookup
        ? { lookup: opts.lookup }
        : {}
      : { lookup: safeLookup(opts.lookup ?? dnsLookup) },
  });
  const targets = new BoundedMap<string, Target>(TARGET_CACHE_MAX);
  const transport = (req: TransportRequest) => {
    let target = targets.get(req.url);
    if (!target) {
      try {
        target = parseTarget(req.url, opts.allowPrivate);
      } catch (err) {
        return Promise.reject(err);
      }
      targets.set(req.url, target);
    }
    // A literal IP never goes through DNS lookup, so it is checked here.
    if (target.forbidden) return Promise.reject(new ForbiddenAddressError(target.forbidden));
    return new Promise<TransportResponse>((resolve, reject) => {
      const delivery = new Delivery(req.signal, req.maxResponseBytes ?? MAX_RESPONSE_BYTES, resolve, reject);
      if (req.signal.aborted) return delivery.onError(abortError());
      req.signal.addEventListener("abort", delivery);
      agent.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: req.method as "POST",
          headers: req.headers,
          body: req.body ?? undefined,
        },
        delivery,
      );
    });
  };
  return Object.assign(transport, { close: () => agent.close() });
}

interface Target {
  origin: string;
  path: string;
  /** A literal IP the target names and allowPrivate forbids, else null. */
  forbidden: string | null;
}

/** Targets parsed, by URL, so a delivery does not parse its URL again. Bounded like the signing key caches. */
const TARGET_CACHE_MAX = 1000;

function parseTarget(raw: string, allowPrivate: boolean): Target {
  const url = new URL(raw);
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new TypeError(`invalid URL protocol ${url.protocol}`);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return {
    origin: url.origin,
    path: url.pathname + url.search,
    forbidden: !allowPrivate && isIP(host) && isForbiddenAddress(host) ? host : null,
  };
}

function abortError(): Error {
  return new DOMException("This operation was aborted", "AbortError");
}

/** One request, on undici's dispatcher handler API (what undici.request builds on): the response body
 *  is collected as it arrives, up to MAX_RESPONSE_BYTES, with no Readable stream or AbortSignal per
 *  request: about half the CPU of undici.request + body.text()
 *  (docs/decisions/0010-dispatcher-delivery.md). A body over the limit is cut there and its connection
 *  closed, never read to the end. The legacy handler methods (onConnect …
 *  onError) are undici 7's cheapest: a handler with the newer onRequestStart API is wrapped per request. */
class Delivery {
  private abort: ((err: Error) => void) | null = null;
  private status = 0;
  private rawHeaders: Buffer[] = [];
  private chunks: Buffer[] = [];
  private size = 0;
  private done = false;

  constructor(
    private readonly signal: CancelSignal,
    private readonly max: number,
    private readonly resolve: (r: TransportResponse) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  /** The run was cancelled (timeout or stop): abort the request wherever it is. (The Delivery is its
   *  own abort listener, so a request needs no closure.) */
  handleEvent(): void {
    const err = abortError();
    if (this.abort) this.abort(err);
    else this.onError(err); // not connected yet: onConnect aborts it when it gets there
  }

  onConnect(abort: (err: Error) => void): void {
    if (this.done) abort(abortError());
    else this.abort = abort;
  }

  onHeaders(status: number, rawHeaders: Buffer[]): boolean {
    if (status < 200) return true; // 1xx: the real answer follows
    this.status = status;
    this.rawHeaders = rawHeaders;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.size <= this.max) this.chunks.push(chunk);
    this.size += chunk.length;
    // Over the limit: answer with what we keep, and close the connection rather than read the rest.
    if (this.size > this.max && !this.done) {
      this.finish();
      this.abort?.(new Error("response body over the limit"));
    }
    return true;
  }

  onComplete(): void {
    if (!this.done) this.finish();
  }

  onError(err: Error): void {
    if (this.done) return;
    this.done = true;
    this.signal.removeEventListener("abort", this);
    this.reject(err);
  }

  private finish(): void {
    this.done = true;
    this.signal.removeEventListener("abort", this);
    const { chunks } = this;
    const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    const truncated = all.length > this.max;
    this.resolve(
      new DeliveryResponse(
        this.status,
        this.rawHeaders,
        (truncated ? all.subarray(0, this.max) : all).toString("utf8"),
        truncated,
      ),
    );
  }
}

class DeliveryResponse implements TransportResponse {
  constructor(
    readonly status: number,
    private readonly rawHeaders: Buffer[],
    readonly body: string,
    readonly truncated: boolean,
  ) {}

  headers(): Record<string, string> {
    const out: Record<string, string> = {};
    const raw = this.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i].toString("latin1").toLowerCase();
      const value = raw[i + 1].toString("latin1");
      out[name] = name in out ? `${out[name]}, ${value}` : value;
    }
    return out;
  }

  /** The first value of a header, from undici's raw [name, value, …] list. */
  header(name: string): string | null {
    const raw = this.rawHeaders;
    const want = name.toLowerCase();
    for (let i = 0; i < raw.length; i += 2) {
      if (raw[i].length === want.length && raw[i].toString("latin1").toLowerCase() === want)
        return raw[i + 1].toString("latin1");
    }
    return null;
  }
}

class ForbiddenAddressError extends Error {
  code = "EFORBIDDEN";
  constructor(address: string) {
    super(`target resolves to a forbidden address (${address})`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Wraps a resolver so that no forbidden address ever reaches the socket: if any answer is
 *  forbidden the whole lookup fails (an attacker's name may mix public and private answers). */
const safeLookup =
  (resolve: typeof dnsLookup) =>
  (hostname: string, options: object, callback: LookupCallback): void => {
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
