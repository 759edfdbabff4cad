// No import circle among the packages' and apps' sources, type-only imports included (a circle through
// a type still ties two files' order and meaning together). dpdm reads the TypeScript sources with
// their .ts specifiers and follows one package into another through the workspace links.
import { parseCircular, parseDependencyTree } from "dpdm";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Circles allowed for now, by a file every one of them passes through. packages/api/src/app.ts: the
 *  route files import `AppEnv` from app.ts, which imports them — it moves to a file of its own on the
 *  house-routes branch; remove this entry when that branch merges. */
const ALLOWED_THROUGH = ["packages/api/src/app.ts"];

it("finds no import circle in packages/*/src or apps/*/src", async () => {
  const tree = await parseDependencyTree(
    ["packages/*/src/**/*.ts", "packages/*/src/**/*.tsx", "apps/*/src/**/*.ts", "apps/*/src/**/*.tsx"],
    { context: root, cwd: root, transform: false, skipDynamicImports: false },
  );
  expect(Object.keys(tree).length).toBeGreaterThan(100); // the sources were read
  const circles = parseCircular(tree).filter((c) => !c.some((f) => ALLOWED_THROUGH.includes(f)));
  expect(circles.map((c) => [...c, c[0]].join(" -> "))).toEqual([]);
}, 120_000);
