// No import circle among the packages' and apps' sources, type-only imports included (a circle through
// a type still ties two files' order and meaning together). dpdm reads the TypeScript sources with
// their .ts specifiers and follows one package into another through the workspace links.
import { parseCircular, parseDependencyTree } from "dpdm";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

it("finds no import circle in packages/*/src or apps/*/src", async () => {
  const tree = await parseDependencyTree(
    ["packages/*/src/**/*.ts", "packages/*/src/**/*.tsx", "apps/*/src/**/*.ts", "apps/*/src/**/*.tsx"],
    { context: root, cwd: root, transform: false, skipDynamicImports: false },
  );
  expect(Object.keys(tree).length).toBeGreaterThan(100); // the sources were read
  const circles = parseCircular(tree);
  expect(circles.map((c) => [...c, c[0]].join(" -> "))).toEqual([]);
}, 120_000);
