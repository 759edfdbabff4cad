// The `fairway` CLI against a real server: the admin and tenant commands, --json output, errors as the
// API's code with exit status 1, tail, and --help. The CLI is bundled from sources as its package's
// build does (one esbuild run), so each command costs a plain `node` start rather than a tsx compile.
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
// Inside the CLI's own node_modules, so its bare imports resolve to its declared dependencies.
const outDir = join(root, "packages/cli/node_modules/.cache", `cli-test-${process.pid}`);
const bin = join(outDir, "main.js");

let server: ServerProcess;
let receiver: Receiver;

async function fairway(args: string[], token?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    FAIRWAY_URL: server.url,
    ...(token ? { FAIRWAY_TOKEN: token } : {}),
  };
  try {
    const r = await run(process.execPath, [bin, ...args], { cwd: root, env, timeout: 30_000 });
    return { code: 0, ...r };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}
const json = async (args: string[], token?: string) => {
  const r = await fairway([...args, "--json"], token);
  expect(r.stderr).toBe("");
  return JSON.parse(r.stdout);
};

beforeAll(async () => {
  mkdirSync(outDir, { recursive: true });
  const deps = Object.keys(JSON.parse(readFileSync(join(root, "packages/cli/package.json"), "utf8")).dependencies);
  await build({
    entryPoints: [join(root, "packages/cli/src/main.ts")],
    outfile: bin,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: deps.flatMap((d) => [d, `${d}/*`]),
    logLevel: "silent",
  });
  [server, receiver] = await Promise.all([startServerProcess({ FAIRWAY_POLL_MS: "50" }), startReceiver()]);
}, 60_000);

afterAll(async () => {
  rmSync(outDir, { recursive: true, force: true });
  await server?.stop();
  await receiver?.close();
});

describe("fairway CLI", () => {
  it("creates a tenant and key, then a job whose delivery tail reports", async () => {
    const tenant = await json(["tenants", "create", "Acme", "--id", "acme", "--max-in-flight", "5"], server.adminToken);
    expect(tenant).toMatchObject({ id: "acme", name: "Acme", maxInFlight: 5 });
    receiver.secrets = [tenant.signingSecret];
    const listed = await json(["tenants", "list"], server.adminToken);
    expect(listed.map((t: { id: string }) => t.id)).toEqual(["acme"]);
    const { key } = await json(["keys", "create", "acme"], server.adminToken);
    expect(key).toMatch(/^fw_/);

    const job = await json(
      ["jobs", "create", "--name", "ping", "--delay-ms", "0", "--target", `${receiver.url}/ok`, "--payload", '{"n":1}'],
      key,
    );
    expect(job).toMatchObject({ name: "ping", status: "active", payload: { n: 1 } });
    await receiver.waitFor((d) => d.some((x) => x.verified));

    const tail = await fairway(["tail", "--all", "--exit-after", "1", "--interval-ms", "100", "--json"], key);
    expect(tail.code).toBe(0);
    const attempt = JSON.parse(tail.stdout.trim());
    expect(attempt).toMatchObject({ jobId: job.id, jobName: "ping", attempt: 1, outcome: "success", httpStatus: 200 });
    const trigger = await json(["triggers", "get", attempt.triggerId], key);
    expect(trigger.attempts).toHaveLength(1);

    const cron = await json(
      [
        "jobs",
        "create",
        "--name",
        "tick",
        "--cron",
        "0 3 * * *",
        "--timezone",
        "Europe/Berlin",
        "--target",
        `${receiver.url}/ok`,
      ],
      key,
    );
    expect((await json(["jobs", "pause", cron.id], key)).status).toBe("paused");
    expect((await json(["jobs", "resume", cron.id], key)).status).toBe("active");
    const manual = await json(["jobs", "run", cron.id], key);
    expect(manual).toMatchObject({ jobId: cron.id, kind: "manual" });
    const jobs = await json(["jobs", "list"], key);
    expect(jobs.map((j: { name: string }) => j.name).sort()).toEqual(["ping", "tick"]);
    const human = await fairway(["jobs", "list"], key);
    expect(human.stdout).toMatch(/^ID\s+NAME\s+TYPE\s+STATUS/);
  }, 120_000);

  it("jobs list: schedules in words, last run and streak, --failing; dead-letters replay; tail --all oldest first", async () => {
    const tenant = await json(["tenants", "create", "Beta", "--id", "beta"], server.adminToken);
    receiver.secrets = [...receiver.secrets, tenant.signingSecret];
    const { key } = await json(["keys", "create", "beta"], server.adminToken);
    const create = (name: string, ...rest: string[]) => json(["jobs", "create", "--name", name, ...rest], key);
    const ok = await create("once-ok", "--delay-ms", "0", "--target", `${receiver.url}/ok`);
    const bad = await create(
      "once-bad",
      "--delay-ms",
      "0",
      "--target",
      `${receiver.url}/status/400`,
      "--max-attempts",
      "1",
    );
    await create("weekday", "--cron", "0 9 * * 1-5", "--timezone", "Europe/Berlin", "--target", `${receiver.url}/ok`);
    type Listed = {
      id: string;
      status: string;
      failureStreak: number;
      schedule: unknown;
      lastRun?: { outcome: string };
    };
    const listed = async (...args: string[]) => (await json(["jobs", "list", ...args], key)) as Listed[];
    await until(
      () => listed(),
      (js) =>
        js.find((j) => j.id === bad.id)?.status === "failed" && js.find((j) => j.id === ok.id)?.status === "completed",
      30_000,
      "both one-time jobs ended",
    );
    const human = (await fairway(["jobs", "list"], key)).stdout;
    expect(human).toMatch(/^ID\s+NAME\s+TYPE\s+STATUS\s+SCHEDULE\s+LASTRUN\s+FAILING/);
    expect(human).toContain("At 09:00, Monday through Friday (Europe/Berlin)");
    expect(human).toMatch(/once-bad .*once at 20\d\d-.*dead_lettered 20\d\d-.*1 dead in a row/);
    expect(human).not.toContain('{"');
    // --json is the API's objects, schedules as they are.
    const failing = await listed("--failing");
    expect(failing.map((j) => j.id)).toEqual([bad.id]);
    expect(failing[0]!.schedule).toHaveProperty("at");

    const dead = await json(["dead-letters", "list", "--job", bad.id], key);
    expect(dead).toHaveLength(1);
    const replay = await fairway(["dead-letters", "replay", "--job", bad.id], key);
    expect(replay.stdout.trim()).toBe("replayed 1; 0 remain");
    await until(
      () => json(["triggers", "get", dead[0].id], key),
      (t: { status: string; attemptCount: number }) => t.status === "dead" && t.attemptCount === 2,
      30_000,
      "the replayed trigger ended again",
    );
    // The backlog (three attempts over two jobs) comes oldest first.
    const tail = await fairway(["tail", "--all", "--exit-after", "3", "--interval-ms", "100", "--json"], key);
    const lines = tail.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { startedAt: string; jobName: string });
    expect(lines.map((l) => l.jobName).sort()).toEqual(["once-bad", "once-bad", "once-ok"]);
    const started = lines.map((l) => l.startedAt);
    expect(started).toEqual(started.slice().sort());
  }, 120_000);

  it("fairness keys: --key on jobs, keys set|get|list|reset|defaults, the admin's --tenant, bounds refused", async () => {
    await json(["tenants", "create", "Keyed", "--id", "keyed"], server.adminToken);
    const { key } = await json(["keys", "create", "keyed"], server.adminToken);
    const job = await json(
      ["jobs", "create", "--name", "k", "--key", "cust-1", "--cron", "0 3 * * *", "--target", `${receiver.url}/ok`],
      key,
    );
    expect(job.key).toBe("cust-1");
    await json(["jobs", "create", "--name", "n", "--cron", "0 3 * * *", "--target", `${receiver.url}/ok`], key);
    expect((await json(["jobs", "list", "--key", "cust-1"], key)).map((j: { id: string }) => j.id)).toEqual([job.id]);

    expect((await json(["keys", "set", "cust-1", "--max-in-flight", "2"], key)).override).toEqual({ maxInFlight: 2 });
    // set changes the fields given and keeps the others.
    const set = await json(["keys", "set", "cust-1", "--weight", "3", "--rate", "none"], key);
    expect(set.override).toEqual({ maxInFlight: 2, weight: 3, ratePerSecond: null });
    expect((await json(["keys", "get", "cust-1"], key)).policy).toEqual({
      maxInFlight: 2,
      ratePerSecond: null,
      weight: 3,
    });
    expect((await json(["keys", "list"], key)).map((k: { key: string }) => k.key)).toEqual(["cust-1"]);
    const human = await fairway(["keys", "list"], key);
    expect(human.stdout).toMatch(/^KEY\s+RUNNING\s+DUE\s+LAGMS\s+SHARE\s+MAXINFLIGHT\s+RATE\s+WEIGHT\s+OVERRIDE\n/);
    expect(human.stdout).toMatch(/cust-1\s+0\s+0\s+-\s+0%\s+2\s+none\s+3\s+yes/);
    expect((await json(["keys", "reset", "cust-1"], key)).override).toBeNull();

    expect(await json(["keys", "defaults"], key)).toEqual({ maxInFlight: null, ratePerSecond: null, weight: 1 });
    expect(await json(["keys", "defaults", "--max-in-flight", "4", "--rate", "2.5"], key)).toEqual({
      maxInFlight: 4,
      ratePerSecond: 2.5,
      weight: 1,
    });
    expect(await json(["keys", "defaults", "--rate", "none"], key)).toEqual({
      maxInFlight: 4,
      ratePerSecond: null,
      weight: 1,
    });
    // The admin, for the tenant.
    expect((await json(["keys", "defaults", "--tenant", "keyed"], server.adminToken)).maxInFlight).toBe(4);
    expect(
      (await json(["keys", "set", "x", "--weight", "2", "--tenant", "keyed"], server.adminToken)).policy.weight,
    ).toBe(2);

    // Bounds: the API's code and message; nothing changed.
    const bad = await fairway(["keys", "set", "cust-1", "--max-in-flight", "0", "--json"], key);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr).error).toMatchObject({ status: 400, code: "validation_error" });
    expect(JSON.parse(bad.stderr).error.message).toMatch(/^maxInFlight: /);
    const weight = await fairway(["keys", "defaults", "--weight", "1001"], key);
    expect(weight.stderr).toMatch(/^error: validation_error: weight: must be at most 1000/);
    const word = await fairway(["keys", "set", "cust-1", "--rate", "fast"], key);
    expect([word.code, word.stderr]).toEqual([1, expect.stringMatching(/must be a number, or none/)]);
    expect((await json(["keys", "get", "cust-1"], key)).override).toBeNull();
    expect((await json(["keys", "defaults"], key)).weight).toBe(1);
  }, 120_000);

  it("plans create|list|get|update|delete|assign, tenants create --plan; a plan in use is not deleted", async () => {
    const admin = server.adminToken;
    expect(
      await json(["plans", "create", "team", "--name", "Team", "--max-in-flight", "20", "--key-weight", "2"], admin),
    ).toMatchObject({
      id: "team",
      maxInFlight: 20,
      keyDefaults: { weight: 2 },
    });
    const t = await json(["tenants", "create", "Planned", "--id", "planned", "--plan", "team", "--weight", "5"], admin);
    expect(t).toMatchObject({ plan: "team", maxInFlight: 20, weight: 5, overrides: { weight: 5 } });
    expect((await json(["plans", "update", "team", "--max-in-flight", "30"], admin)).tenants).toBe(1);
    expect((await json(["plans", "get", "team"], admin)).maxInFlight).toBe(30);
    expect((await json(["plans", "list"], admin)).map((p: { id: string }) => p.id)).toContain("team");
    const inUse = await fairway(["plans", "delete", "team"], admin);
    expect(inUse.code).not.toBe(0);
    expect(inUse.stderr).toContain("plan_in_use");
    expect(await json(["plans", "assign", "planned", "none"], admin)).toMatchObject({
      plan: null,
      maxInFlight: 10,
      weight: 5,
    });
    expect(await json(["plans", "delete", "team"], admin)).toEqual({ id: "team", deleted: true });
    const bad = await fairway(["plans", "create", "x", "--max-in-flight", "0"], admin);
    expect([bad.code !== 0, bad.stderr]).toEqual([true, expect.stringMatching(/max-in-flight/)]);
  }, 120_000);

  it("debounce flags on jobs create; backfills create|list|get|cancel", async () => {
    await json(["tenants", "create", "Flow", "--id", "flow"], server.adminToken);
    const { key } = await json(["keys", "create", "flow"], server.adminToken);
    const debounced = ["jobs", "create", "--name", "d", "--delay-ms", "0", "--target", `${receiver.url}/ok`];
    const flags = ["--debounce-key", "acct-1", "--debounce-ms", "600000", "--max-wait-ms", "900000"];
    const first = await json([...debounced, ...flags], key);
    expect(first.debounced).toEqual({ joined: null, folded: 0 });
    const second = await json([...debounced, ...flags, "--payload", '{"n":2}'], key);
    expect(second).toMatchObject({ id: first.id, debounced: { joined: first.id, folded: 1 }, payload: { n: 2 } });
    const half = await fairway([...debounced, "--debounce-key", "acct-1"], key);
    expect([half.code, half.stderr]).toEqual([1, expect.stringMatching(/--debounce-ms/)]);

    const cron = await json(
      ["jobs", "create", "--name", "c", "--cron", "0 * * * *", "--target", `${receiver.url}/ok`],
      key,
    );
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const range = ["--from", new Date(hour - 3 * 3_600_000).toISOString(), "--to", new Date(hour).toISOString()];
    const b = await json(["backfills", "create", cron.id, ...range], key);
    expect(b).toMatchObject({ jobId: cron.id, fires: 3, skipped: 0, counts: { pending: 3 } });
    expect((await json(["backfills", "list", cron.id], key)).map((x: { id: string }) => x.id)).toEqual([b.id]);
    expect((await json(["backfills", "get", b.id], key)).fires).toBe(3);
    // The server's executor may have run some of them already: the cancel reports what it stopped.
    const human = await fairway(["backfills", "cancel", b.id], key);
    const stopped = Number(/cancelled now: (\d+)/.exec(human.stdout)?.[1]);
    const counts = (await json(["backfills", "get", b.id], key)).counts as Record<string, number>;
    expect(counts.cancelled ?? 0).toBe(stopped);
    expect(Object.values(counts).reduce((x, y) => x + y, 0)).toBe(3);
  }, 120_000);

  it("jobs --tag; triggers cancel and rerun --payload", async () => {
    const tenant = await json(["tenants", "create", "Delta", "--id", "delta"], server.adminToken);
    receiver.secrets = [...receiver.secrets, tenant.signingSecret];
    const { key } = await json(["keys", "create", "delta"], server.adminToken);
    const later = await json(
      [
        ...["jobs", "create", "--name", "later", "--delay-ms", "600000", "--target", `${receiver.url}/ok/cli-later`],
        ...["--tag", "env:prod", "--tag", "src:a:b"],
      ],
      key,
    );
    expect(later.tags).toEqual({ env: "prod", src: "a:b" });
    await json(["jobs", "create", "--name", "other", "--delay-ms", "600000", "--target", `${receiver.url}/ok`], key);
    const tagged = (await json(["jobs", "list", "--tag", "env:prod"], key)) as Array<{ id: string }>;
    expect(tagged.map((j) => j.id)).toEqual([later.id]);
    expect((await fairway(["jobs", "list", "--tag", "env:prod"], key)).stdout).toContain("env:prod src:a:b");
    const listed = await fetch(`${server.url}/v1/jobs/${later.id}/triggers`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const [pending] = ((await listed.json()) as { data: Array<{ id: string }> }).data;
    const cancelled = await json(["triggers", "cancel", pending!.id], key);
    expect([cancelled.status, cancelled.reason]).toEqual(["cancelled", "cancelled_by_user"]);
    const again = await fairway(["triggers", "cancel", pending!.id], key);
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining("trigger_finished")]);

    // Many at once from a file: one line per item, the bad one with its code.
    const file = join(outDir, "batch.json");
    writeFileSync(
      file,
      JSON.stringify([
        { name: "f-1", schedule: { delayMs: 600000 }, target: { url: `${receiver.url}/ok` }, idempotencyKey: "f1" },
        { name: "", schedule: { delayMs: 600000 }, target: { url: `${receiver.url}/ok` } },
      ]),
    );
    const many = await fairway(["jobs", "create", "--file", file], key);
    expect(many.code).toBe(0);
    expect(many.stdout).toMatch(/^INDEX\s+STATUS\s+ID\s+ERROR/);
    expect(many.stdout).toMatch(/\n0\s+201\s+job_/);
    expect(many.stdout).toMatch(/\n1\s+400\s+-\s+validation_error: name/);
    const batch = await json(["jobs", "create", "--file", file], key);
    expect(batch.map((r: { status: number }) => r.status)).toEqual([200, 400]);

    const rerun = await json(["triggers", "rerun", pending!.id, "--payload", '{"edited":true}'], key);
    expect([rerun.triggeredBy, rerun.rerunOf]).toEqual(["rerun", pending!.id]);
    const got = await receiver.waitFor((ds) => ds.some((d) => d.id === rerun.id), 30_000);
    expect((got.find((d) => d.id === rerun.id)!.body as { payload: unknown }).payload).toEqual({ edited: true });
  });

  it("reports the API's error code and exits 1", async () => {
    const r = await fairway(["jobs", "get", "job_missing", "--json"], "fw_not_a_real_key_000000000000000000000");
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr).error).toMatchObject({ status: 401 });
    const usage = await fairway(["jobs", "create", "--name", "x"], "fw_x");
    expect(usage.code).toBe(1);
    expect(usage.stderr).toMatch(/give exactly one schedule/);
  }, 60_000);

  it("has --help on every command", async () => {
    for (const cmd of [
      [],
      ["start"],
      ["migrate"],
      ["tenants", "create"],
      ["tenants", "list"],
      ["keys", "create"],
      ["keys", "list"],
      ["keys", "get"],
      ["keys", "set"],
      ["keys", "reset"],
      ["keys", "defaults"],
      ["jobs", "list"],
      ["jobs", "create"],
      ["jobs", "pause"],
      ["jobs", "resume"],
      ["jobs", "run"],
      ["triggers", "get"],
      ["triggers", "cancel"],
      ["triggers", "rerun"],
      ["plans", "create"],
      ["plans", "list"],
      ["plans", "get"],
      ["plans", "update"],
      ["plans", "delete"],
      ["plans", "assign"],
      ["backfills", "create"],
      ["backfills", "list"],
      ["backfills", "get"],
      ["backfills", "cancel"],
      ["dead-letters", "list"],
      ["dead-letters", "replay"],
      ["tail"],
    ]) {
      const r = await fairway([...cmd, "--help"]);
      expect(r.code, cmd.join(" ")).toBe(0);
      expect(r.stdout).toMatch(/^Usage: fairway/);
    }
  }, 120_000);
});
