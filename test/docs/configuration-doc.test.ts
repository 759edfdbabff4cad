// docs/configuration.md lists every setting the code reads, and nothing else: the server's config
// schema, the Worker's Env, and any env.X / process.env.X read in the packages' and apps' sources;
// docs/deploy-cloudflare.md lists every setting the Worker reads.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");
const read = (p: string) => readFileSync(join(root, p), "utf8");

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const p = join(dir, name);
    if (name === "node_modules" || name === "dist" || name === "test") continue;
    if (statSync(join(root, p)).isDirectory()) out.push(...sources(p));
    else if (/\.(ts|mts|js|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

function workerSettings(): Set<string> {
  const names = new Set<string>();
  const edge = read("apps/edge/src/env.ts");
  const env = edge.slice(edge.indexOf("export interface Env {"), edge.indexOf("export interface EdgeConfig"));
  for (const m of env.matchAll(/^ {2}([A-Z][A-Z0-9_]+)\??:/gm)) names.add(m[1]!);
  return names;
}

function settingsTheCodeReads(): Set<string> {
  const names = workerSettings();
  // The server's zod schema: one key per line inside z.object({ … }).
  const config = read("apps/server/src/config.ts");
  const object = config.slice(config.indexOf("z\n  .object({"), config.indexOf("})\n  .refine"));
  for (const m of object.matchAll(/^ {4}([A-Z][A-Z0-9_]+):/gm)) names.add(m[1]!);
  // Anything else that reads an environment variable by name.
  const files = ["apps", "packages"].flatMap((top) =>
    readdirSync(join(root, top)).flatMap((pkg) => {
      try {
        return sources(join(top, pkg, "src"));
      } catch {
        return [];
      }
    }),
  );
  const envRead = /\benv(?:\.|\[")([A-Z][A-Z0-9_]{2,})\b/g;
  for (const f of files) {
    for (const m of read(f).matchAll(envRead)) names.add(m[1]!);
  }
  return names;
}

function settingsListedIn(path: string): Set<string> {
  const doc = read(path);
  const names = new Set<string>();
  for (const m of doc.matchAll(/`([A-Z][A-Z0-9_]{2,})`/g)) names.add(m[1]!);
  return names;
}

describe("docs/configuration.md", () => {
  it("lists every setting the code reads, and only those", () => {
    const code = settingsTheCodeReads();
    const doc = settingsListedIn("docs/configuration.md");
    // The scan must find the schema and the Env, or the comparison below proves nothing.
    expect(code.has("FAIRWAY_SECRETS_KEY")).toBe(true);
    expect(code.has("FAIRWAY_RUN_MS")).toBe(true);
    expect(code.has("FAIRWAY_URL")).toBe(true);
    expect([...code].filter((n) => !doc.has(n)).sort(), "read by the code, missing from the doc").toEqual([]);
    expect([...doc].filter((n) => !code.has(n)).sort(), "in the doc, read by no code").toEqual([]);
  });

  it("deploy-cloudflare.md's table has every setting the Worker reads", () => {
    const worker = workerSettings();
    expect(worker.has("HYPERDRIVE")).toBe(true);
    const doc = settingsListedIn("docs/deploy-cloudflare.md");
    expect([...worker].filter((n) => !doc.has(n)).sort()).toEqual([]);
  });
});
