// The packages as a user gets them: every public package is packed (its prepack builds dist/), the
// tarballs are installed into a fresh project in a temp dir (no workspace links), the consumer's types
// are checked with tsc (skipLibCheck off), and under plain `node` a consumer creates a tenant, a key and
// jobs against a running server, verifies a real delivery with verifyWebhook and runs a handler job
// through createWorker.
import { execFile } from "node:child_process";
import { copyFileSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
const fixtures = fileURLToPath(new URL("./consumer", import.meta.url));
const PUBLIC = ["sdk", "worker"];

let dir: string;
let db: TestDb;
let server: ServerProcess;
const tarballs: Record<string, string> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "fairway-consumer-"));
  mkdirSync(join(dir, "tarballs"));
  // Packed one after another: each builds with tsup, and the machine may be shared.
  for (const name of PUBLIC) {
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", join(dir, "tarballs")], { cwd: join(root, "packages", name) });
    tarballs[name] = JSON.parse(stdout)[0].filename;
  }
  const deps = Object.fromEntries(PUBLIC.map((n) => [`@fairway/${n}`, `file:./tarballs/${tarballs[n]}`]));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module", dependencies: deps }));
  for (const f of ["consumer.mjs", "types-check.ts", "tsconfig.json"]) copyFileSync(join(fixtures, f), join(dir, f));
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: dir });

  db = await createTestDb();
  server = await startServerProcess({ DATABASE_URL: db.url, FAIRWAY_POLL_MS: "50" });
}, 240_000);

afterAll(async () => {
  await server?.stop();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("packed packages, installed outside the repository", () => {
  it("installs real copies, with no runtime dependency for the SDK", () => {
    for (const name of PUBLIC) expect(lstatSync(join(dir, "node_modules/@fairway", name)).isSymbolicLink()).toBe(false);
    const sdk = JSON.parse(readFileSync(join(dir, "node_modules/@fairway/sdk/package.json"), "utf8"));
    expect(sdk.dependencies ?? {}).toEqual({});
    expect(sdk.exports["./webhooks"]).toEqual({ types: "./dist/webhooks.d.ts", default: "./dist/webhooks.js" });
    expect(sdk.license).toBe("MIT");
  });

  it("type-checks a consumer with tsc (skipLibCheck off)", async () => {
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    const r = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir }).catch((e) => e);
    expect(r.stdout ?? "").toBe("");
  }, 120_000);

  it("creates a tenant, key and jobs under plain node, verifies a delivery and runs a worker job", async () => {
    const { stdout } = await run(process.execPath, ["consumer.mjs"], {
      cwd: dir,
      env: { PATH: process.env.PATH, FAIRWAY_URL: server.url, FAIRWAY_TOKEN: server.adminToken, DATABASE_URL: db.url },
      timeout: 60_000,
    });
    const out = JSON.parse(stdout.trim().split("\n").pop()!);
    expect(out.deliveryId).toMatch(/^trg_|./);
    expect(out.deliveredPayload).toEqual({ hello: "world" });
    expect(out.handled).toEqual([{ to: "a@example.com" }]);
    expect(out.emailTrigger).toBe("succeeded");
    expect(out.forged).toBe("invalid_signature");
    expect(out.jobs).toEqual(out.expectedJobs);
  }, 90_000);
});
