// node:crypto where the runtime has it at hand (Node; Workers only with nodejs_compat, and not always
// through process.getBuiltinModule), else undefined and callers use WebCrypto. Its hashes and HMACs are
// synchronous: WebCrypto's are asynchronous jobs whose bookkeeping costs many times the hash itself for
// the short inputs Fairway hashes on every request and delivery (docs/decisions/0009-sync-node-crypto.md).
export interface NodeCrypto {
  createHmac(
    alg: "sha256",
    key: Uint8Array,
  ): { update(s: string): { digest(): Uint8Array; digest(enc: "base64"): string } };
  createHash(alg: "sha256"): { update(s: string, enc: "utf8"): { digest(enc: "hex"): string } };
}

export const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined;
