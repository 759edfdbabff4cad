// @fairway/store: the schema and every SQL statement Fairway runs. Runtime-neutral (Node and Workers);
// PGlite and the migrator live in "@fairway/store/node".
export * from "./db.ts";
export * as schema from "./schema.ts";
export * from "./sql/claim.ts";
export * from "./sql/settle.ts";
export * from "./sql/renew.ts";
export * from "./sql/release.ts";
export * from "./sql/reap.ts";
export * from "./sql/materialize.ts";
export * from "./sql/createJob.ts";
export * from "./sql/jobLifecycle.ts";
export * from "./sql/replay.ts";
export * from "./sql/tenants.ts";
export * from "./sql/pools.ts";
export * from "./sql/reads.ts";
export * from "./sql/readyIndex.ts";
export * from "./sql/dashboard-reads.ts";
