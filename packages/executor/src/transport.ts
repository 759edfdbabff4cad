// How a webhook request leaves the process. One interface, two implementations: undici's dispatcher
// on Node (node/undici-transport.ts; several times the rate of Node 20's fetch), the platform
// fetch on the edge (fetch-transport.ts). A transport throws only for network failures; any HTTP
// status is an answer.
export interface TransportRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** null: no body at all (GET and HEAD). */
  body: string | null;
  /** Response bytes kept; more are cut off (`truncated`). Default MAX_RESPONSE_BYTES. */
  maxResponseBytes?: number;
  /** Aborts the request: the run timed out, or the executor is stopping. */
  signal: CancelSignal;
}

/** What a transport needs to cancel a request. An AbortSignal is one; the executor passes a RunAbort,
 *  which does the same without an AbortController per run. A listener may be an object with
 *  handleEvent(), as for any EventTarget (a transport then needs no closure per request). */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: AbortListener): void;
  removeEventListener(type: "abort", listener: AbortListener): void;
}

export type AbortListener = (() => void) | { handleEvent(): void };

/** A run's cancellation: aborted once, by its timeout, by stop() or by a newer trigger of its key
 *  (onBusy cancel_running, cancel-watch.ts), whichever comes first (`reason` says which). Handlers get a standard AbortSignal (`signal`), made only when one asks for it: an
 *  AbortController per request (with its timer, and undici's listener bookkeeping on its signal) is a
 *  large share of a delivery's CPU (docs/decisions/0010-dispatcher-delivery.md). */
export class RunAbort implements CancelSignal {
  aborted = false;
  reason: "timeout" | "stop" | "cancel" | null = null;
  private listeners: AbortListener[] | null = null;
  private controller: AbortController | null = null;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  addEventListener(_type: "abort", listener: AbortListener): void {
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: "abort", listener: AbortListener): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }

  abort(reason: "timeout" | "stop" | "cancel"): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort();
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners) for (const l of listeners) typeof l === "function" ? l() : l.handleEvent();
  }
}

export interface TransportResponse {
  status: number;
  /** Lower-cased header lookup. */
  header(name: string): string | null;
  /** At most maxResponseBytes of the body, as text. */
  body: string;
  /** The body was longer than maxResponseBytes. */
  truncated: boolean;
  /** Every header, lower-cased names (repeated ones joined by ", "), for the attempt history. */
  headers(): Record<string, string>;
}

export type Transport = (req: TransportRequest) => Promise<TransportResponse>;

/** Response bodies are kept for the attempt history, truncated: this many bytes unless the pool says
 *  otherwise (its maxResponseBytes, which the API bounds at 1 MiB). */
export const MAX_RESPONSE_BYTES = 65_536;
