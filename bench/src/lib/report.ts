// Output: one JSON object per run (and one summary) appended to bench/results/<scenario>.jsonl, a
// human table on stdout, and the headline as the very last line of the scenario's output.
import { appendFileSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { machine, type Figures, type Scenario } from "./scenario.ts";
import { round, spread, type Spread } from "./stats.ts";

const resultsDir = fileURLToPath(new URL("../../results/", import.meta.url));

export function appendResult(scenario: string, line: object): void {
  mkdirSync(resultsDir, { recursive: true });
  appendFileSync(`${resultsDir}${scenario}.jsonl`, JSON.stringify(line) + "\n");
}

export function summarise(runs: Figures[]): Record<string, Spread> {
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r)))];
  const out: Record<string, Spread> = {};
  for (const k of keys) {
    const xs = runs.map((r) => r[k]).filter((x) => Number.isFinite(x));
    if (xs.length > 0) out[k] = spread(xs);
  }
  return out;
}

export function printTable(s: Scenario, summary: Record<string, Spread>, runs: number): void {
  const rows = Object.entries(summary).map(([k, v]) => [k, fmt(v.median), fmt(v.min), fmt(v.max)]);
  const head = ["figure", `median (${runs} run${runs === 1 ? "" : "s"})`, "min", "max"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  console.log(`\n## ${s.name} — ${s.title}`);
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
}

export function headline(s: Scenario, summary: Record<string, Spread>): string {
  const parts = s.headline.keys.map((k) => `${k}=${summary[k] ? fmt(summary[k].median) : "n/a"}`);
  return `${s.headline.label}: ${parts.join(" ")}`;
}

export function summaryLine(s: Scenario, summary: Record<string, Spread>, quick: boolean) {
  return { scenario: s.name, summary: true, quick, at: new Date().toISOString(), machine: machine(), figures: summary };
}

function fmt(x: number): string {
  return String(Math.abs(x) >= 100 ? Math.round(x) : round(x, 2));
}
