// Small statistics for benchmark samples: percentiles of latencies, and the median/min/max summary
// that every scenario reports over its runs (the median of at least 3, with the spread).

/** The p-th percentile (0..100) of `xs` by nearest rank; NaN for an empty list. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(xs: number[]): Spread {
  return { median: percentile(xs, 50), min: Math.min(...xs), max: Math.max(...xs) };
}

/** Jain's fairness index of normalised shares: 1 = perfectly fair, 1/n = one tenant took everything. */
export function jain(xs: number[]): number {
  const sum = xs.reduce((a, b) => a + b, 0);
  const sq = xs.reduce((a, b) => a + b * b, 0);
  return sq === 0 ? 1 : (sum * sum) / (xs.length * sq);
}

/** Round for display and JSON: 3 significant decimals are plenty for benchmark figures. */
export function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Highest number of intervals open at once (ends sort before starts at the same instant: a slot
 *  freed and re-used at the same moment is not an overlap). */
export function maxConcurrent(intervals: Array<{ start: number; end: number }>): number {
  const events: Array<[number, number]> = [];
  for (const i of intervals) events.push([i.start, 1], [i.end, -1]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let max = 0;
  for (const [, d] of events) max = Math.max(max, (open += d));
  return max;
}
