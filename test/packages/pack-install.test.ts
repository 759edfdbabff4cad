// The packages as a user gets them: every public package is packed (its prepack builds dist/), the
// tarballs are installed into a fresh project in a temp dir (no workspace links), the consumer's types
// are checked with tsc (skipLibCheck off), and under plain `node` a consumer creates a tenant, a key and
// jobs against a running server, verifies a real delivery with verifyWebhook and runs a handler job
// through createWorker. The server is the installed CLI's `fairway start`.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, urlFor, withAdmin, type TestDb } from "../support/pg.ts";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
const fixtures = fileURLToPath(new URL("./consumer", import.meta.url));
const PUBLIC = ["sdk", "worker", "cli"];

let dir: string;
// Packed from copies two levels under the root (as packages/* are, for the relative paths of their
// build), so the packages' own package.json is never swapped under tests running alongside.
const stage = join(root, `.pack-stage-${process.pid}`);
let db: TestDb;
let server: { url: string; child: ChildProcess; output: () => string };
const adminToken = `fwadmin_pack_${process.pid}_${Date.now()}`;
const tarballs: Record<string, string> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "fairway-consumer-"));
  mkdirSync(join(dir, "tarballs"));
  await Promise.all(
    PUBLIC.map(async (name) => {
      cpSync(join(root, "packages", name), join(stage, name), {
        recursive: true,
        filter: (src) => !/\/(node_modules|dist)$/.test(src),
      });
      const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", join(dir, "tarballs")], {
        cwd: join(stage, name),
      });
      tarballs[name] = JSON.parse(stdout)[0].filename;
    }),
  );
  const deps = Object.fromEntries(PUBLIC.map((n) => [`@fairway/${n}`, `file:./tarballs/${tarballs[n]}`]));
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module", dependencies: deps }),
  );
  for (const f of ["consumer.mjs", "types-check.ts", "tsconfig.json"]) copyFileSync(join(fixtures, f), join(dir, f));
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: dir });

  db = await createTestDb();
  server = await startFairway(db.url);
}, 480_000);

/** `fairway start` from the installed CLI, on a free port; resolves once it listens. */
async function startFairway(databaseUrl: string): Promise<typeof server> {
  const child = spawn(
    join(dir, "node_modules/.bin/fairway"),
    ["start", "--port", "0", "--database-url", databaseUrl, "--data-dir", join(dir, ".fairway")],
    {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        FAIRWAY_ADMIN_TOKEN: adminToken,
        FAIRWAY_ALLOW_PRIVATE_TARGETS: "true",
        FAIRWAY_POLL_MS: "50",
        FAIRWAY_LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", () => {
      const m = /Listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`fairway start exited with ${code}:\n${out}`)));
  });
  return { url, child, output: () => out };
}

afterAll(async () => {
  if (server && server.child.exitCode === null) {
    const exited = new Promise((r) => server.child.once("exit", r));
    server.child.kill("SIGTERM");
    await exited;
  }
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  rmSync(stage, { recursive: true, force: true });
});

describe("packed packages, installed outside the repository", () => {
  it("installs real copies, with no runtime dependency for the SDK", () => {
    for (const name of PUBLIC) expect(lstatSync(join(dir, "node_modules/@fairway", name)).isSymbolicLink()).toBe(false);
    const sdk = JSON.parse(readFileSync(join(dir, "node_modules/@fairway/sdk/package.json"), "utf8"));
    expect(sdk.dependencies ?? {}).toEqual({});
    expect(sdk.exports["./webhooks"]).toEqual({ types: "./dist/webhooks.d.ts", default: "./dist/webhooks.js" });
    expect(sdk.license).toBe("MIT");
    // Runtime-neutral (Bun, Deno, Workers): the SDK's code imports nothing, Node built-ins included.
    const sdkDist = join(dir, "node_modules/@fairway/sdk/dist");
    for (const f of readdirSync(sdkDist).filter((f) => f.endsWith(".js"))) {
      expect(readFileSync(join(sdkDist, f), "utf8"), f).not.toMatch(
        /\bfrom\s*["'](?!\.\/)|\brequire\(|\bimport\(\s*["'](?!\.\/)/,
      );
    }
  });

  it("runs the fairway bin: --help, and tenants through the CLI", async () => {
    const bin = join(dir, "node_modules/.bin/fairway");
    expect((await run(bin, ["jobs", "--help"])).stdout).toMatch(/^Usage: fairway jobs/);
    const env = { PATH: process.env.PATH, FAIRWAY_URL: server.url, FAIRWAY_TOKEN: adminToken };
    const { stdout } = await run(bin, ["tenants", "create", "via-cli", "--id", "via-cli", "--json"], { cwd: dir, env });
    expect(JSON.parse(stdout)).toMatchObject({ id: "via-cli", status: "active" });

    // The migrations ship in the package: `fairway migrate` builds an empty database's schema.
    const empty = `fairway_pack_${process.pid}`;
    await withAdmin((sql) => sql.unsafe(`CREATE DATABASE ${empty}`));
    try {
      await run(bin, ["migrate", "--database-url", urlFor(empty)], { cwd: dir, env: { PATH: process.env.PATH } });
      const db = postgres(urlFor(empty), { max: 1, onnotice: () => {} });
      const tables = (await db`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`).map(
        (r) => r.table_name,
      );
      await db.end();
      expect(tables).toEqual(expect.arrayContaining(["tenants", "jobs", "triggers", "pools"]));
    } finally {
      await withAdmin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${empty} WITH (FORCE)`));
    }
  }, 60_000);

  it("type-checks a consumer with tsc (skipLibCheck off)", async () => {
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    const r = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir }).catch((e) => e);
    expect(r.stdout ?? "").toBe("");
  }, 120_000);

  it("creates a tenant, key and jobs under plain node, verifies a delivery and runs a worker job", async () => {
    const { stdout } = await run(process.execPath, ["consumer.mjs"], {
      cwd: dir,
      env: { PATH: process.env.PATH, FAIRWAY_URL: server.url, FAIRWAY_TOKEN: adminToken, DATABASE_URL: db.url },
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
