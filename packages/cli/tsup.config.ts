import { cpSync } from "node:fs";
import { defineConfig } from "tsup";
import { bundled } from "../../scripts/publish/tsup-shared.ts";

export default defineConfig({
  entry: ["src/main.ts"],
  format: ["esm"],
  dts: false,
  clean: true,
  target: "node20",
  platform: "node",
  noExternal: bundled,
  // The migrations travel with the bundle; the store looks for them next to it (store/src/node.ts).
  onSuccess: async () => cpSync("../../drizzle", "dist/drizzle", { recursive: true }),
});
