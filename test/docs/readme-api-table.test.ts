// The README's API table names every route: each route's last fixed path segment (e.g. "revoke" of
// /v1/admin/tenants/:id/portal-sessions/revoke, "backfills" of /v1/backfills/:id) appears in a row,
// and every row has two columns, so no row swallows the next when rendered.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ROUTES } from "../../packages/api/src/route-table.ts";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const start = readme.indexOf("| tenant key");
const table = readme.slice(start, readme.indexOf("\n\n", start)).split("\n");

describe("README's API table", () => {
  it("has two cells in every row", () => {
    expect(start).toBeGreaterThan(-1);
    const cells = (row: string) => row.replace(/`[^`]*`/g, "x").split("|").length - 2;
    expect(table.filter((row) => cells(row) !== 2)).toEqual([]);
  });

  it("names every route the API serves", () => {
    const text = table.join("\n");
    const last = (path: string) =>
      path
        .split("/")
        .filter((s) => s && !s.startsWith(":") && !s.startsWith("{"))
        .pop()!;
    const missing = ROUTES.filter((r) => !text.includes(last(r.path))).map(
      (r) => `${r.method.toUpperCase()} ${r.path}`,
    );
    expect(ROUTES.length).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });
});
