// The SDK's README lists every public method of both clients, and nothing that is not one: its two
// method tables are read and compared with the methods the clients really have (walked at run time).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createAdminClient, createClient } from "@fairway/sdk";

/** Dotted paths of the functions in a client object (a function returning an object, such as
 *  tenants.fairness(id), is one method). */
function methods(o: object, prefix = ""): string[] {
  return Object.entries(o).flatMap(([k, v]) =>
    typeof v === "function" ? [prefix + k] : v && typeof v === "object" ? methods(v, `${prefix}${k}.`) : [],
  );
}

/** The method names in the README's table under the heading that starts with `heading`. */
function documented(readme: string, heading: string): string[] {
  const start = readme.indexOf(`### \`${heading}`);
  expect(start, `a "### \`${heading}…" section`).toBeGreaterThan(-1);
  const rest = readme.slice(start + 4);
  const section = rest.slice(0, rest.search(/\n#{2,3} /));
  return [...section.matchAll(/^\| `([\w.]+)\(/gm)].map((m) => m[1]!);
}

describe("packages/sdk/README.md", () => {
  const readme = readFileSync(new URL("../../packages/sdk/README.md", import.meta.url), "utf8");
  it("lists every method of createClient, once", () => {
    const client = createClient({ baseUrl: "http://127.0.0.1:1", apiKey: "fw_readme" });
    const listed = documented(readme, "createClient(");
    expect(listed.slice().sort()).toEqual(methods(client).sort());
  });
  it("lists every method of createAdminClient, once", () => {
    const admin = createAdminClient({ baseUrl: "http://127.0.0.1:1", adminToken: "readme" });
    const listed = documented(readme, "createAdminClient(");
    expect(listed.slice().sort()).toEqual(methods(admin).sort());
  });
});
