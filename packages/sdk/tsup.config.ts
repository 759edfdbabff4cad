import { defineConfig } from "tsup";

// ES2020 and no Node built-ins: the same file runs in Node ≥ 18, Bun, Deno and Workers.
export default defineConfig({
  entry: ["src/index.ts", "src/webhooks.ts"],
  format: ["esm"],
  dts: true,
  clean: true,
  target: "es2020",
  platform: "neutral",
  splitting: true,
  sourcemap: false,
});
