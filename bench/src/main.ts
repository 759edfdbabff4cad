// `npm run bench [-- --quick] [-- --only <scenario>[,<scenario>]] [-- --runs N]`
// Runs each scenario (default 3 times; --quick: small N, once), writes every run and a summary to
// bench/results/<scenario>.jsonl and prints a table; each scenario's last line is its headline.
// `npm run bench -- --against <git-ref> --only <scenario>[,…] [--pairs N]`: the same scenarios on
// that ref and on the working tree in turn, and each headline figure's ratio; `--study
// <study>[:<arg>]` in place of --only, a design study's figures (lib/against-run.ts).
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { againstOptions } from "./lib/against.ts";
import { runAgainst } from "./lib/against-run.ts";
import { appendResult, headline, printTable, summarise, summaryLine } from "./lib/report.ts";
import { machine, type BenchContext, type Figures, type Scenario } from "./lib/scenario.ts";
import { scenarios } from "./scenarios/index.ts";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    runs: { type: "string" },
    against: { type: "string" },
    pairs: { type: "string" },
    study: { type: "string" },
  },
});

if (values.against !== undefined || values.pairs !== undefined || values.study !== undefined) {
  const studies = readdirSync(fileURLToPath(new URL("./studies/", import.meta.url)))
    .filter((f) => f.endsWith(".ts"))
    .map((f) => f.slice(0, -3));
  const opts = againstOptions(
    values,
    scenarios.map((s) => s.name),
    studies,
  );
  if ("error" in opts) {
    console.error(
      "usage: npm run bench -- --against <git-ref> (--only <scenario>[,<scenario>] | --study <study>[:<arg>]) [--pairs N] [--quick]",
    );
    console.error(opts.error);
    process.exit(2);
  }
  process.exit((await runAgainst(opts, scenarios)) ? 0 : 1);
}

const quick = values.quick ?? false;
const runs = values.runs ? Number(values.runs) : quick ? 1 : 3;
const wanted = values.only?.split(",").map((s) => s.trim());
const unknown = wanted?.filter((w) => !scenarios.some((s) => s.name === w)) ?? [];
if (unknown.length > 0 || !Number.isInteger(runs) || runs < 1) {
  console.error(`usage: npm run bench -- [--quick] [--runs N] [--only ${scenarios.map((s) => s.name).join("|")}]`);
  if (unknown.length > 0) console.error(`unknown scenario: ${unknown.join(", ")}`);
  process.exit(2);
}

const ctx: BenchContext = {
  quick,
  run: 0,
  shared: new Map(),
  log: (m) => console.log(`  · ${m}`),
};

console.log(
  `Fairway bench — ${JSON.stringify(machine())}${quick ? " — QUICK (small N, one run; not a measurement)" : ""}`,
);
const headlines: string[] = [];
let failed = false;
for (const s of scenarios.filter((s: Scenario) => !wanted || wanted.includes(s.name))) {
  const results: Figures[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      console.log(`\n${s.name}: run ${i + 1}/${runs}`);
      ctx.run = i;
      const figures = await s.run(ctx);
      results.push(figures);
      appendResult(s.name, { scenario: s.name, run: i + 1, quick, at: new Date().toISOString(), figures });
    }
  } catch (err) {
    failed = true;
    console.error(`${s.name} failed:`, err);
    continue;
  }
  const summary = summarise(results);
  appendResult(s.name, summaryLine(s, summary, quick));
  printTable(s, summary, runs);
  const line = headline(s, summary);
  headlines.push(line);
  console.log(line);
}
console.log(`\n${headlines.join("\n")}`);
process.exit(failed ? 1 : 0);
