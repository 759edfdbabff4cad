import { defineConfig } from "tsup";
import { bundled } from "../../scripts/publish/tsup-shared.ts";

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  dts: true,
  clean: true,
  target: "node20",
  platform: "node",
  noExternal: bundled,
});
