// The secrets a delivery names, read and opened at delivery: a secret deleted or changed since the job
// was saved is seen at once (no cache to go stale, and no plaintext kept between deliveries). Only
// targets that name a secret pay for the query.
import { decryptSecret, type SecretsKeyring } from "@fairway/core";
import { sealedSecrets, type Db } from "@fairway/store";
import type { SecretResolver } from "./run-trigger.ts";

export function secretResolver(db: Db, ring: SecretsKeyring): SecretResolver {
  return async (tenantId, names) => {
    const rows = await sealedSecrets(db, tenantId, names);
    const values = new Map<string, string>();
    for (const r of rows) values.set(r.name, await decryptSecret(ring, tenantId, r.name, r.sealed));
    return { values, missing: names.filter((n) => !values.has(n)).sort() };
  };
}
