// The layout is chosen once per pool and carried by one object (packages/store/src/layout): no source
// outside that module asks which layout it is on. A runtime check is a call of the old catalog probe
// (isDistributed), a read of the layout's kind or a comparison of its name, or a flag telling the
// executor to work per tenant. (A read whose SQL differs takes its shape from the layout's readShape
// visitor; a statement builder's variant argument is passed by the layout's implementations.)
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const layoutDir = join(root, "packages/store/src/layout");
const CHECKS = [
  /\bisDistributed\s*\(/,
  /\blayoutKind\s*\(/,
  /\.name\s*[!=]==?\s*["'](single|per-tenant)["']/,
  /\b(kind|layout)\s*[!=]==?\s*["'](single|per-tenant)["']/,
];
/** The executor's per-tenant flag, threaded from the claimer to the standby claims. */
const EXECUTOR_FLAG = /\b(perTenant|distributed)\b/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules" || name === "test" || name === "dist") return [];
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

it("counts no runtime layout check outside the layout module", () => {
  const files = ["packages", "apps"].flatMap((d) => readdirSync(join(root, d)).map((p) => join(root, d, p, "src")));
  const found: string[] = [];
  let read = 0;
  for (const file of files.flatMap((d) => (statSync(d, { throwIfNoEntry: false })?.isDirectory() ? sources(d) : []))) {
    read++;
    if (file.startsWith(layoutDir)) continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        const flag = file.includes("packages/executor/src") && EXECUTOR_FLAG.test(line);
        if (flag || CHECKS.some((c) => c.test(line))) found.push(`${relative(root, file)}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(read).toBeGreaterThan(100); // the sources were read
  expect(found).toEqual([]);
});
