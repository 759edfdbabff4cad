// Prometheus text format parsed by a library (parse-prometheus-text-format, prom2json's shape), so a
// test reads a scrape as Prometheus would, not with a regular expression of its own. The library folds
// a histogram's series into one and drops their labels, so histograms are also read untyped: their
// _bucket, _sum and _count series with every label kept (histogram()).
import parse from "parse-prometheus-text-format";

export interface Sample {
  labels?: Record<string, string>;
  value?: string;
}
interface Family {
  name: string;
  help: string;
  type: "GAUGE" | "COUNTER" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
  metrics: Sample[];
}
export type Scrape = Map<string, Family>;

const parseText = parse as unknown as (t: string) => Family[];

export function parsePrometheus(text: string): Scrape {
  const typed = parseText(text);
  const untyped = parseText(text.replace(/^# TYPE \S+ histogram\n/gm, ""));
  // prom-client writes each histogram series' _sum and _count after its buckets, so one name comes
  // back as several families: merged here.
  const m: Scrape = new Map();
  for (const f of untyped) {
    const seen = m.get(f.name);
    if (seen) seen.metrics.push(...f.metrics);
    else m.set(f.name, { ...f, metrics: [...f.metrics] });
  }
  for (const f of typed) m.set(f.name, { ...f, metrics: f.type === "HISTOGRAM" ? [] : f.metrics });
  return m;
}

/** The samples of a family whose labels include `labels`. */
export function samples(m: Scrape, name: string, labels: Record<string, string> = {}): Sample[] {
  return (m.get(name)?.metrics ?? []).filter((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
}

/** One histogram series, summed over the series whose labels include `labels`: cumulative bucket
 *  counts by `le`, the count and the sum. */
export function histogram(m: Scrape, name: string, labels: Record<string, string> = {}) {
  const buckets: Record<string, number> = {};
  for (const s of samples(m, `${name}_bucket`, labels))
    buckets[s.labels!.le] = (buckets[s.labels!.le] ?? 0) + Number(s.value);
  const total = (suffix: string) => samples(m, `${name}_${suffix}`, labels).reduce((n, s) => n + Number(s.value), 0);
  return { type: m.get(name)?.type, buckets, count: total("count"), sum: total("sum") };
}
