// The layout object of a connection pool (layout.ts): chosen once (detect.ts) and carried by one
// object; callers call its operations and never ask which one they are on.
import type { Db } from "../db.ts";
import { layoutKind } from "./detect.ts";
import type { Layout } from "./layout.ts";
import type { LayoutName } from "./name.ts";
import { perTenant } from "./per-tenant.ts";
import { single } from "./single.ts";

export type { Layout, TenantShares } from "./layout.ts";
export { LAYOUT_NAMES, type LayoutName } from "./name.ts";
export { ALL_TENANTS, oneTenant, type Scope } from "./scope.ts";

const onCluster = perTenant(true);
const offCluster = perTenant(false);

/** The layout of `db`, read once (detect.ts). */
export async function layoutOf(db: Db): Promise<Layout> {
  const kind = await layoutKind(db);
  return kind.name === "single" ? single : kind.cluster ? onCluster : offCluster;
}

/** The layout of that name, off a Citus cluster (the per-tenant layout lists no nodes). */
export function layoutNamed(name: LayoutName): Layout {
  return name === "single" ? single : offCluster;
}
