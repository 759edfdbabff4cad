// The per-tenant layout writes per tenant: each statement, or each transaction, at one tenant goes to
// that tenant's node alone, and no transaction spans nodes (a two-phase commit, and one node down
// would fail every tenant's write with it). The tenants of a batch are written side by side, a few at
// once. The single-node layout writes a batch as one group.
import { ALL_TENANTS, oneTenant, type Scope } from "./scope.ts";

/** How many tenants' writes of one batch run at once. */
export const TENANTS_AT_ONCE = 4;

/** One group's write: its scope, its items (in their order) and its outcome. */
export interface Written<T, R> {
  scope: Scope;
  items: T[];
  outcome: PromiseSettledResult<R>;
}

/** `items` by tenant, each tenant's in their order, the tenants in order of first appearance. */
function byTenant<T>(items: Iterable<T>, tenantOf: (item: T) => string | undefined): Map<string | undefined, T[]> {
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
async function eachGroup<T, R>(
  groups: Array<[Scope, T[]]>,
  write: (scope: Scope, items: T[]) => Promise<R>,
  limit = TENANTS_AT_ONCE,
): Promise<Array<Written<T, R>>> {
  const out = new Array<Written<T, R>>(groups.length);
  let next = 0;
  const worker = async () => {
    while (next < groups.length) {
      const i = next++;
      const [scope, items] = groups[i]!;
      try {
        out[i] = { scope, items, outcome: { status: "fulfilled", value: await write(scope, items) } };
      } catch (reason) {
        out[i] = { scope, items, outcome: { status: "rejected", reason } };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, groups.length) }, worker));
  return out;
}

/** One group of every item, for every tenant. */
export function fanOutOnce<T, R>(
  items: Iterable<T>,
  write: (scope: Scope, items: T[]) => Promise<R>,
): Promise<Array<Written<T, R>>> {
  const all = [...items];
  return all.length === 0 ? Promise.resolve([]) : eachGroup([[ALL_TENANTS, all]], write);
}

/** A group per tenant (an item without a tenant in one group for every tenant), a few at once. */
export function fanOutPerTenant<T, R>(
  items: Iterable<T>,
  tenantOf: (item: T) => string | undefined,
  write: (scope: Scope, items: T[]) => Promise<R>,
): Promise<Array<Written<T, R>>> {
  const groups = [...byTenant(items, tenantOf)].map(
    ([tenantId, list]) => [tenantId === undefined ? ALL_TENANTS : oneTenant(tenantId), list] as [Scope, T[]],
  );
  return eachGroup(groups, write);
}
