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

/** One contender of inTurn(): the figure's key, the label it is logged under, and what measures its rate. */
export type Arm = [key: string, label: string, measure: () => Promise<number>];

/** Measure contenders back to back, each run starting one further along (ctx.run), so that the
 *  machine's drift during a run favours none of them. Logs each rate; returns them by key. */
export async function inTurn(ctx: BenchContext, ...arms: Arm[]): Promise<Figures> {
  const k = ctx.run % arms.length;
  const rates: Figures = {};
  for (const [key, label, measure] of [...arms.slice(k), ...arms.slice(0, k)]) {
    rates[key] = await measure();
    ctx.log(`${label} ${Math.round(rates[key])}/s`);
  }
  return rates;
}

/** Called as an arm's clock starts (after its warm-up) and stops, for a study that measures the same
 *  window (studies/webhooks-cpu.ts). */
export interface TimedWindow {
  start(): void;
  end(): void;
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
