// The store suite against both layouts on plain PostgreSQL: the per-tenant layout's statements are
// those a Citus cluster routes to one tenant's shard, and plain PostgreSQL runs them too (the cluster
// tests in test/citus keep the routing, node-down and rebalance drills).
import { connectPostgres, LAYOUT_NAMES, type Store } from "@fairway/store";
import { createTestDb } from "../../../test/support/pg.ts";
import { storeSuite } from "./store-suite.ts";

for (const layout of LAYOUT_NAMES)
  storeSuite(`Postgres 15, ${layout} layout`, {
    layout,
    async open() {
      const t = await createTestDb({ layout });
      const extra: Store[] = [];
      return {
        store: t.store,
        async more() {
          const s = connectPostgres(t.url, { max: 2, layout });
          extra.push(s);
          return s;
        },
        async drop() {
          await Promise.all(extra.map((s) => s.close()));
          await t.drop();
        },
      };
    },
  });
