// The regression guard's arithmetic (`npm run bench -- --against <ref>`): its options, the figures a
// run appended to a results file or a study printed, and each figure's ratio (working tree ÷ ref)
// over the pairs. Pure, so that a test can hold it; against-run.ts does the git, the processes and the output.
import type { Figures } from "./scenario.ts";
import { spread, type Spread } from "./stats.ts";

export interface AgainstOptions {
  ref: string;
  pairs: number;
  scenarios: string[];
  /** A design study instead of scenarios: bench/src/studies/<name>.ts run with `args`. */
  study: { name: string; args: string[] } | null;
  quick: boolean;
}

/** The guard's options from main.ts's parsed flags, or a message saying what to send instead. */
export function againstOptions(
  values: { against?: string; only?: string; study?: string; pairs?: string; runs?: string; quick?: boolean },
  known: string[],
  studies: string[] = [],
): AgainstOptions | { error: string } {
  const ref = values.against?.trim() ?? "";
  if (ref === "" || ref.startsWith("-")) return { error: "--against takes a git ref, e.g. --against main" };
  if (values.runs !== undefined) return { error: "--against runs each side once per pair: send --pairs N, not --runs" };
  const pairs = values.pairs === undefined ? 3 : Number(values.pairs);
  if (!Number.isInteger(pairs) || pairs < 1)
    return { error: `--pairs takes a whole number ≥ 1, not "${values.pairs}"` };
  if (values.study !== undefined) {
    if (values.only !== undefined) return { error: "--against takes --only <scenario> or --study <study>, not both" };
    const [name, ...args] = values.study.split(":");
    if (!studies.includes(name))
      return {
        error: `unknown study: ${name} (one of ${studies.join("|")}; arguments after a colon, e.g. cpu-per-item:throughput)`,
      };
    return { ref, pairs, scenarios: [], study: { name, args }, quick: values.quick ?? false };
  }
  const scenarios = values.only
    ? values.only
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "")
    : [];
  if (scenarios.length === 0)
    return { error: `--against needs --only <scenario>[,<scenario>] (${known.join("|")}) or --study <study>` };
  const unknown = scenarios.filter((s) => !known.includes(s));
  if (unknown.length > 0) return { error: `unknown scenario: ${unknown.join(", ")} (one of ${known.join("|")})` };
  return { ref, pairs, scenarios, study: null, quick: values.quick ?? false };
}

/** A study's figures: the numeric fields of the last JSON object line it printed. */
export function studyFigures(stdout: string): Figures | null {
  const line = stdout
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("{"))
    .at(-1);
  if (line === undefined) return null;
  const out: Figures = {};
  for (const [k, v] of Object.entries(JSON.parse(line) as Record<string, unknown>))
    if (typeof v === "number" && Number.isFinite(v)) out[k] = v;
  return out;
}

/** The figures of the runs main.ts appended to a results file (`text`: what was appended since the
 *  side started), its summary lines left out. */
export function appendedRuns(text: string, scenario: string): Figures[] {
  const out: Figures[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const row = JSON.parse(line) as { scenario?: string; summary?: boolean; figures?: Figures };
    if (row.scenario === scenario && !row.summary && row.figures) out.push(row.figures);
  }
  return out;
}

export interface PairFigures {
  tree: Figures;
  ref: Figures;
}

export interface KeyRatio {
  /** Working tree ÷ ref, one per pair where both sides had the figure. */
  ratio: Spread | null;
  tree: Spread | null;
  ref: Spread | null;
}

/** Each key's ratio working tree ÷ ref, pair by pair, summarised as median/min–max; a key that
 *  either side lacks (a figure the ref does not report yet) or that is 0 on the ref has no ratio. */
export function pairRatios(pairs: PairFigures[], keys: string[]): Record<string, KeyRatio> {
  const out: Record<string, KeyRatio> = {};
  const of = (xs: number[]) => (xs.length > 0 ? spread(xs) : null);
  for (const k of keys) {
    const ok = (x: number | undefined): x is number => typeof x === "number" && Number.isFinite(x);
    const ratios = pairs
      .filter((p) => ok(p.tree[k]) && ok(p.ref[k]) && p.ref[k] !== 0)
      .map((p) => p.tree[k] / p.ref[k]);
    out[k] = {
      ratio: of(ratios),
      tree: of(pairs.map((p) => p.tree[k]).filter(ok)),
      ref: of(pairs.map((p) => p.ref[k]).filter(ok)),
    };
  }
  return out;
}
