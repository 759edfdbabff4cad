import { connectPostgres, type Store } from "@fairway/store";
import { createTestDb } from "../../../test/support/pg.ts";
import { storeSuite } from "./store-suite.ts";

storeSuite("Postgres 15", {
  async open() {
    const t = await createTestDb();
    const extra: Store[] = [];
    return {
      store: t.store,
      async more() {
        const s = connectPostgres(t.url, { max: 2 });
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
