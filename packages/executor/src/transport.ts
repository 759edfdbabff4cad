// How a webhook request leaves the process. One interface, two implementations: undici's dispatcher
// on Node (node/undici-transport.ts; ~48k/s keep-alive vs ~7k/s for Node 20's fetch), the platform
// fetch on the edge (fetch-transport.ts). A transport throws only for network failures; any HTTP
// status is an answer.
export interface TransportRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
}

export interface TransportResponse {
  status: number;
  /** Lower-cased header lookup. */
  header(name: string): string | null;
  /** At most maxBytes of the body, as text. */
  body: string;
}

export type Transport = (req: TransportRequest) => Promise<TransportResponse>;

/** Response bodies are kept for the attempt history, truncated. */
export const MAX_RESPONSE_BYTES = 4096;
