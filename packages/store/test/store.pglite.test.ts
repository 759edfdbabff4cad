import { connectPglite, migrate } from "@fairway/store/node";
import { storeSuite } from "./store-suite.ts";

storeSuite("PGlite (embedded)", {
  async open() {
    const store = await connectPglite();
    await migrate(store);
    // PGlite is one connection: "more" connections are the same database, serialised.
    return { store, more: async () => store, drop: () => store.close() };
  },
});
