// The layouts' names (layout.ts): what connectPostgres can be told, and what the conformance suite
// runs over.
export type LayoutName = "single" | "per-tenant";

export const LAYOUT_NAMES = ["single", "per-tenant"] as const satisfies readonly LayoutName[];
