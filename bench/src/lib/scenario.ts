// What a scenario is: one measured run that returns named figures. The runner (main.ts) repeats it,
// summarises each figure as median/min/max, writes JSON lines and prints the table and headline.
import os from "node:os";

export interface BenchContext {
  /** Small N, one run, no speed expectations: keeps the harness from rotting (CI). */
  quick: boolean;
  /** This run's number (0-based): scenarios alternate the order of the contenders they pair with it,
   *  so that the machine's drift during a run does not always favour the same one. */
  run: number;
  /** Figures other scenarios measured earlier in this invocation (e.g. throughput for cron-burst). */
  shared: Map<string, number>;
  log(message: string): void;
}

export type Figures = Record<string, number>;

/** Run contenders back to back, each run starting one further along (ctx.run), so that the machine's
 *  drift during a run favours none of them. */
export async function inTurn(ctx: BenchContext, ...steps: Array<() => Promise<void>>): Promise<void> {
  const k = ctx.run % steps.length;
  for (const step of [...steps.slice(k), ...steps.slice(0, k)]) await step();
}

export interface Scenario {
  name: string;
  /** What the scenario measures, for the table title. */
  title: string;
  /** The headline: `label: key=value …` over these figures (medians). */
  headline: { label: string; keys: string[] };
  run(ctx: BenchContext): Promise<Figures>;
}

/** Facts about the machine, stamped on every result line so numbers are never read without them. */
export function machine() {
  return {
    nproc: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? "unknown",
    memGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
}
