// No import circle among the packages' and apps' sources, type-only imports included (a circle through
// a type still ties two files' order and meaning together). dpdm reads the TypeScript sources with
// their .ts specifiers and follows one package into another through the workspace links.
import { parseCircular, parseDependencyTree } from "dpdm";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const sources = ["packages/*/src/**/*.ts", "packages/*/src/**/*.tsx", "apps/*/src/**/*.ts", "apps/*/src/**/*.tsx"];

it("finds no import circle in packages/*/src or apps/*/src", async () => {
  const tree = await parseDependencyTree(sources, {
    context: root,
    cwd: root,
    transform: false,
    skipDynamicImports: false,
  });
  expect(Object.keys(tree).length).toBeGreaterThan(100); // the sources were read
  const circles = parseCircular(tree);
  expect(circles.map((c) => [...c, c[0]].join(" -> "))).toEqual([]);
}, 120_000);

// The dashboard is mounted next to the API by the apps and calls the API's command layer; the API
// never reaches into the dashboard (neither by import nor by dependency).
it("keeps packages/api free of the dashboard", async () => {
  const tree = await parseDependencyTree(["packages/api/src/**/*.ts"], {
    context: root,
    cwd: root,
    transform: false,
    skipDynamicImports: false,
  });
  const files = Object.keys(tree).filter((f) => f.startsWith("packages/api/src/"));
  expect(files.length).toBeGreaterThan(20);
  const reaching = files.flatMap((f) =>
    (tree[f] ?? [])
      .filter((d) => d.request.startsWith("@fairway/dashboard") || d.id?.startsWith("packages/dashboard/"))
      .map((d) => `${f} -> ${d.request}`),
  );
  expect(reaching).toEqual([]);
  // Nothing the API's files import leads into the dashboard either (through another package).
  expect(Object.keys(tree).filter((f) => f.startsWith("packages/dashboard/"))).toEqual([]);
  const pkg = JSON.parse(readFileSync(`${root}/packages/api/package.json`, "utf8"));
  expect(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })).not.toContain("@fairway/dashboard");
}, 120_000);

/** Store functions that change state, by verb (authenticateKey records a key's last use). */
const WRITES =
  /^(add|authenticate|cancel|claim|create|delete|drop|expire|heartbeat|insert|mark|materialize|migrate|notify|pause|put|release|remove|renew|replay|reseal|resume|revoke|rotate|run|set|settle|standby|test|touch|update|upsert)[A-Z]/;

// The dashboard changes state only through the API's command layer (DashboardDeps.commands): from the
// store it imports reads and types, never a write.
it("keeps the dashboard's store imports to reads", () => {
  const dir = `${root}/packages/dashboard/src`;
  const imported = readdirSync(dir).flatMap((file) =>
    [...readFileSync(`${dir}/${file}`, "utf8").matchAll(/import\s*\{([^}]*)\}\s*from\s*"@fairway\/store"/g)].flatMap(
      (m) =>
        m[1]
          .split(",")
          .map((name) => name.trim())
          .filter((name) => name && !name.startsWith("type "))
          .map((name) => `${file}: ${name}`),
    ),
  );
  expect(imported.length).toBeGreaterThan(10); // the imports were read
  expect(imported.filter((entry) => WRITES.test(entry.split(": ")[1]))).toEqual([]);
});
