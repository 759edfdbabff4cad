import { verticalSlice } from "./vertical-slice.ts";

// `npm start` with no services: embedded PGlite and in-process coordination.
verticalSlice("embedded PGlite", async () => ({ env: {}, cleanup: async () => {} }));
