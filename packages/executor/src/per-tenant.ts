// On a Citus cluster (docs/scaling.md) the executor writes per tenant: each statement, or each
// transaction, at one tenant goes to that tenant's node alone, and no transaction spans nodes (a
// two-phase commit, and one node down would fail every tenant's write with it). The tenants of a batch
// are written side by side, a few at once.

/** How many tenants' writes of one batch run at once. */
const TENANTS_AT_ONCE = 4;

/** `items` by tenant, each tenant's in their order, the tenants in order of first appearance. */
export function byTenant<T>(
  items: Iterable<T>,
  tenantOf: (item: T) => string | undefined,
): Map<string | undefined, T[]> {
  const groups = new Map<string | undefined, T[]>();
  for (const item of items) {
    const tenant = tenantOf(item);
    const list = groups.get(tenant);
    if (list) list.push(item);
    else groups.set(tenant, [item]);
  }
  return groups;
}

/** `write` for each group, at most `limit` at once; each group's outcome, in the groups' order. */
export async function eachTenant<T, R>(
  groups: Map<string | undefined, T[]>,
  write: (tenantId: string | undefined, items: T[]) => Promise<R>,
  limit = TENANTS_AT_ONCE,
): Promise<Array<PromiseSettledResult<R>>> {
  const entries = [...groups];
  const out = new Array<PromiseSettledResult<R>>(entries.length);
  let next = 0;
  const worker = async () => {
    while (next < entries.length) {
      const i = next++;
      const [tenantId, items] = entries[i]!;
      try {
        out[i] = { status: "fulfilled", value: await write(tenantId, items) };
      } catch (reason) {
        out[i] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, entries.length) }, worker));
  return out;
}
