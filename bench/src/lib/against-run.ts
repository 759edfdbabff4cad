// `npm run bench -- --against <ref> --only <scenario>[,…] [--pairs N]`: the ref checked out in a
// temporary git worktree (npm ci there), then each scenario run once on each side per pair, the side
// that goes first alternating from pair to pair (A B, B A, A B …: whatever the second run of a pair
// gains or loses, such as a warm cache or a machine still busy, falls on both sides alike), each side
// by its own main.ts in its own process. The figures come from the JSON lines each side's main.ts appends; the ratios of
// the scenario's headline figures (working tree ÷ ref) are printed and written to
// bench/results/against.jsonl. `--study <name>[:<arg>…]` runs each side's bench/src/studies/<name>.ts
// instead and compares every figure of the JSON line it prints last. The worktree is
// removed afterwards, also when a run fails or the guard is interrupted.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type AgainstOptions, appendedRuns, type PairFigures, pairRatios, studyFigures } from "./against.ts";
import { appendResult } from "./report.ts";
import { machine, type Figures, type Scenario } from "./scenario.ts";
import { round } from "./stats.ts";

const treeRoot = fileURLToPath(new URL("../../../", import.meta.url));

const git = (args: string[]) => execFileSync("git", ["-C", treeRoot, ...args], { encoding: "utf8" }).trim();

/** True when every pair of every scenario ran. */
export async function runAgainst(opts: AgainstOptions, scenarios: Scenario[]): Promise<boolean> {
  let sha: string;
  try {
    sha = git(["rev-parse", "--verify", "--quiet", `${opts.ref}^{commit}`]);
  } catch {
    console.error(`--against: "${opts.ref}" is not a commit in this repository (send a branch, tag or sha)`);
    return false;
  }
  const dir = mkdtempSync(join(os.tmpdir(), "fairway-against-"));
  // mkdtemp makes it 0700; the embedded PostgreSQL (run as the postgres user under root) reads its
  // binaries from this checkout's node_modules.
  chmodSync(dir, 0o755);
  let child: ChildProcess | null = null;
  let cleaned = false;
  const cleanup = () => {
    if (cleaned) return;
    cleaned = true;
    if (child && child.exitCode === null) child.kill("SIGTERM");
    try {
      git(["worktree", "remove", "--force", dir]);
    } catch {}
    rmSync(dir, { recursive: true, force: true });
    try {
      git(["worktree", "prune"]);
    } catch {}
  };
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`\n--against: ${signal}, removing ${dir}`);
    cleanup();
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  /** Runs a command to its end; its stdout inherited, dropped, or (pipe) returned. */
  const exec = (cmd: string, args: string[], cwd: string, stdio: "inherit" | "ignore" | "pipe") =>
    new Promise<string>((resolve, reject) => {
      const c = spawn(cmd, args, { cwd, stdio: ["ignore", stdio, "inherit"], env: process.env });
      child = c;
      let out = "";
      c.stdout?.setEncoding("utf8").on("data", (d: string) => (out += d));
      c.once("error", reject);
      c.once("exit", (code, signal) =>
        code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(" ")} in ${cwd}: exit ${code ?? signal}`)),
      );
    });
  const tsx = (root: string) => join(root, "node_modules", ".bin", "tsx");
  // What is compared: each chosen scenario (its headline figures), or the study (all its figures).
  const units: Unit[] = opts.study
    ? [studyUnit(opts.study, (root, args) => exec(tsx(root), args, root, "pipe"))]
    : scenarios
        .filter((s) => opts.scenarios.includes(s.name))
        .map((s) => ({
          name: s.name,
          keys: () => s.headline.keys,
          async run(side: string, root: string) {
            const results = join(root, "bench", "results", `${s.name}.jsonl`);
            const from = existsSync(results) ? statSync(results).size : 0;
            const args = ["bench/src/main.ts", "--only", s.name, "--runs", "1", ...(opts.quick ? ["--quick"] : [])];
            await exec(tsx(root), args, root, "inherit");
            const runs = appendedRuns(readFileSync(results).subarray(from).toString("utf8"), s.name);
            if (runs.length !== 1) throw new Error(`${side}: expected one run of ${s.name} in ${results}`);
            return runs[0];
          },
        }));
  const label = `${opts.ref} (${sha.slice(0, 10)})`;
  try {
    git(["worktree", "add", "--detach", dir, sha]);
    console.log(`--against ${label}: npm ci in ${dir}`);
    await exec("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], dir, "ignore");
    const sides = [
      { name: "ref", root: dir },
      { name: "tree", root: treeRoot },
    ] as const;
    for (const s of units) {
      const pairs: PairFigures[] = [];
      for (let p = 1; p <= opts.pairs; p++) {
        const got: Partial<Record<"ref" | "tree", Figures>> = {};
        const load: Record<string, number> = {};
        for (const side of p % 2 === 1 ? sides : [...sides].reverse()) {
          console.log(`\n=== ${s.name} pair ${p}/${opts.pairs}: ${side.name === "ref" ? label : "working tree"}`);
          load[side.name] = round(os.loadavg()[0]);
          got[side.name] = await s.run(side.name, side.root);
        }
        const pair = { tree: got.tree!, ref: got.ref! };
        pairs.push(pair);
        appendResult("against", {
          against: opts.ref,
          sha,
          scenario: s.name,
          pair: p,
          quick: opts.quick,
          at: new Date().toISOString(),
          load1: load,
          ...pair,
        });
      }
      report(s.name, s.keys(pairs), pairs, label, sha, opts);
    }
    return true;
  } catch (err) {
    console.error("--against failed:", err instanceof Error ? err.message : err);
    return false;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    cleanup();
  }
}

interface Unit {
  name: string;
  keys(pairs: PairFigures[]): string[];
  run(side: string, root: string): Promise<Figures>;
}

function studyUnit(
  study: { name: string; args: string[] },
  run: (root: string, args: string[]) => Promise<string>,
): Unit {
  return {
    name: `study ${[study.name, ...study.args].join(" ")}`,
    keys: (pairs) => Object.keys(pairs[0]?.tree ?? {}),
    async run(side, root) {
      const out = await run(root, [`bench/src/studies/${study.name}.ts`, ...study.args]);
      const figures = studyFigures(out);
      if (!figures) throw new Error(`${side}: ${study.name} printed no JSON line`);
      console.log(`  · ${JSON.stringify(figures)}`);
      return figures;
    },
  };
}

function report(name: string, keys: string[], pairs: PairFigures[], label: string, sha: string, opts: AgainstOptions) {
  const ratios = pairRatios(pairs, keys);
  appendResult("against", {
    against: opts.ref,
    sha,
    scenario: name,
    summary: true,
    pairs: pairs.length,
    quick: opts.quick,
    at: new Date().toISOString(),
    machine: machine(),
    ratios,
  });
  const f = (x: number | undefined) =>
    x === undefined ? "n/a" : String(Math.abs(x) >= 100 ? Math.round(x) : round(x, 3));
  const head = ["figure", "tree ÷ ref (median)", "min", "max", "tree (median)", "ref (median)"];
  const rows = Object.entries(ratios).map(([k, r]) => [
    k,
    f(r.ratio?.median),
    f(r.ratio?.min),
    f(r.ratio?.max),
    f(r.tree?.median),
    f(r.ref?.median),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  console.log(`\n## ${name} — working tree ÷ ${label}, ${pairs.length} pair${pairs.length === 1 ? "" : "s"}`);
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
  const parts = Object.entries(ratios).map(([k, r]) =>
    r.ratio ? `${k}=${f(r.ratio.median)} [${f(r.ratio.min)}–${f(r.ratio.max)}]` : `${k}=n/a`,
  );
  console.log(`against ${opts.ref} ${name}: ${parts.join(" ")}`);
}
