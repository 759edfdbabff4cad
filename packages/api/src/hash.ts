// SHA-256 of the tenant key on every request (and of a body under an Idempotency-Key). WebCrypto's digest
// is an asynchronous job (a thread-pool round trip and its bookkeeping): it was ~8% of the API process's
// CPU per POST /v1/jobs (BENCH.md api, --cpu-prof), many times the hash itself. Where node:crypto is at
// hand (Node; Workers only with nodejs_compat, and not always through process.getBuiltinModule) it hashes
// synchronously — the same digest as @fairway/core's sha256Hex, which stays the fallback.
import { sha256Hex as webCryptoSha256Hex } from "@fairway/core";

interface NodeHash {
  createHash(alg: "sha256"): { update(s: string, enc: "utf8"): { digest(enc: "hex"): string } };
}
const nodeCrypto = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(
  "node:crypto",
) as NodeHash | undefined;

export function sha256Hex(text: string): Promise<string> {
  if (nodeCrypto) return Promise.resolve(nodeCrypto.createHash("sha256").update(text, "utf8").digest("hex"));
  return webCryptoSha256Hex(text);
}
