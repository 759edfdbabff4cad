// Tenant secrets: sealed values (core secrets-crypto.ts) by tenant and name. Nothing here sees a
// plaintext value; callers seal before writing and open after reading.
import { and, asc, eq, inArray, ne, sql } from "drizzle-orm";
import type { Db } from "../db.ts";
import { secrets } from "../schema.ts";

export type SecretRow = typeof secrets.$inferSelect;
/** What the API shows of a secret: never its value. */
export type SecretInfo = Pick<SecretRow, "name" | "createdAt" | "updatedAt">;

const info = { name: secrets.name, createdAt: secrets.createdAt, updatedAt: secrets.updatedAt };

export async function putSecret(
  db: Db,
  tenantId: string,
  name: string,
  sealed: string,
  keyId: string,
): Promise<SecretInfo> {
  const [row] = await db
    .insert(secrets)
    .values({ tenantId, name, sealed, keyId })
    // The insert's own updated_at (now()): Citus takes no function call in an ON CONFLICT's SET.
    .onConflictDoUpdate({
      target: [secrets.tenantId, secrets.name],
      set: { sealed, keyId, updatedAt: sql`excluded.updated_at` },
    })
    .returning(info);
  return row;
}

export async function listSecrets(db: Db, tenantId: string): Promise<SecretInfo[]> {
  return db.select(info).from(secrets).where(eq(secrets.tenantId, tenantId)).orderBy(asc(secrets.name));
}

export async function deleteSecret(db: Db, tenantId: string, name: string): Promise<boolean> {
  const rows = await db
    .delete(secrets)
    .where(and(eq(secrets.tenantId, tenantId), eq(secrets.name, name)))
    .returning(info);
  return rows.length > 0;
}

/** The sealed values of the named secrets the tenant has. */
export async function sealedSecrets(
  db: Db,
  tenantId: string,
  names: string[],
): Promise<Array<{ name: string; sealed: string }>> {
  if (names.length === 0) return [];
  return db
    .select({ name: secrets.name, sealed: secrets.sealed })
    .from(secrets)
    .where(and(eq(secrets.tenantId, tenantId), inArray(secrets.name, names)));
}

/** The names the tenant has no secret for. */
export async function missingSecrets(db: Db, tenantId: string, names: string[]): Promise<string[]> {
  const found = new Set((await sealedSecrets(db, tenantId, names)).map((r) => r.name));
  return names.filter((n) => !found.has(n)).sort();
}

/** Up to `limit` secrets sealed with another key than `keyId`: the re-encryption step's work. */
export async function secretsNotSealedWith(db: Db, keyId: string, limit: number): Promise<SecretRow[]> {
  return db
    .select()
    .from(secrets)
    .where(ne(secrets.keyId, keyId))
    .orderBy(asc(secrets.tenantId), asc(secrets.name))
    .limit(limit);
}

/** Replaces a sealed value only if it is still the one that was read (a PUT in between wins). */
export async function resealSecret(db: Db, row: SecretRow, sealed: string, keyId: string): Promise<boolean> {
  const rows = await db
    .update(secrets)
    .set({ sealed, keyId })
    .where(and(eq(secrets.tenantId, row.tenantId), eq(secrets.name, row.name), eq(secrets.sealed, row.sealed)))
    .returning(info);
  return rows.length > 0;
}
