// The regression guard's options and ratios (bench/src/lib/against.ts); the guard itself builds a ref
// and runs the bench, which no test does.
import { describe, expect, it } from "vitest";
import { againstOptions, appendedRuns, pairRatios, studyFigures } from "../../bench/src/lib/against.ts";

const known = ["throughput", "api"];

describe("againstOptions", () => {
  it("takes a ref, the scenarios and the pairs (3 unless told)", () => {
    expect(againstOptions({ against: "main", only: "throughput, api" }, known)).toEqual({
      ref: "main",
      pairs: 3,
      scenarios: ["throughput", "api"],
      study: null,
      quick: false,
    });
    expect(againstOptions({ against: "d57f74c", only: "api", pairs: "5", quick: true }, known)).toMatchObject({
      pairs: 5,
      quick: true,
    });
  });

  it("takes a study with its arguments after a colon, in place of scenarios", () => {
    expect(againstOptions({ against: "main", study: "cpu-per-item:throughput" }, known, ["cpu-per-item"])).toEqual({
      ref: "main",
      pairs: 3,
      scenarios: [],
      study: { name: "cpu-per-item", args: ["throughput"] },
      quick: false,
    });
  });

  it("says what to send instead of a bad option", () => {
    const error = (v: Parameters<typeof againstOptions>[0]) => (againstOptions(v, known) as { error: string }).error;
    expect(error({ only: "api", pairs: "3" })).toMatch(/--against takes a git ref/);
    expect(error({ against: "--only", only: "api" })).toMatch(/--against takes a git ref/);
    expect(error({ against: "main" })).toMatch(/needs --only <scenario>.*throughput\|api/);
    expect(error({ against: "main", only: "thruput" })).toMatch(/unknown scenario: thruput/);
    expect(error({ against: "main", only: "api", pairs: "0" })).toMatch(/--pairs takes a whole number/);
    expect(error({ against: "main", only: "api", pairs: "2.5" })).toMatch(/--pairs takes a whole number/);
    expect(error({ against: "main", only: "api", runs: "3" })).toMatch(/send --pairs N, not --runs/);
    expect(error({ against: "main", study: "cpu-per-itm" })).toMatch(/unknown study: cpu-per-itm/);
    expect(error({ against: "main", study: "x", only: "api" })).toMatch(
      /--only <scenario> or --study <study>, not both/,
    );
  });
});

describe("appendedRuns", () => {
  it("reads the runs of the scenario from the appended lines, not the summary or other scenarios", () => {
    const text = [
      JSON.stringify({ scenario: "api", run: 1, figures: { create_per_s: 10 } }),
      JSON.stringify({ scenario: "throughput", run: 1, figures: { fairway_per_s: 100 } }),
      JSON.stringify({ scenario: "throughput", summary: true, figures: { fairway_per_s: { median: 100 } } }),
      "",
    ].join("\n");
    expect(appendedRuns(text, "throughput")).toEqual([{ fairway_per_s: 100 }]);
  });
});

describe("studyFigures", () => {
  it("takes the numeric fields of the last JSON line a study printed", () => {
    const out = `building…\n{"arm":"x","exec_us":1}\n{"arm":"throughput","exec_us":17.5,"pg_us":27,"backends":3}\n`;
    expect(studyFigures(out)).toEqual({ exec_us: 17.5, pg_us: 27, backends: 3 });
    expect(studyFigures("no figures\n")).toBeNull();
  });
});

describe("pairRatios", () => {
  it("gives each key's ratio tree ÷ ref pair by pair, as median and min–max", () => {
    const r = pairRatios(
      [
        { tree: { a: 30, b: 1 }, ref: { a: 10, b: 2 } },
        { tree: { a: 20, b: 1 }, ref: { a: 20, b: 2 } },
        { tree: { a: 40, b: 1 }, ref: { a: 20, b: 0 } },
      ],
      ["a", "b", "c"],
    );
    expect(r.a.ratio).toEqual({ median: 2, min: 1, max: 3 });
    expect(r.a.tree).toEqual({ median: 30, min: 20, max: 40 });
    expect(r.a.ref).toEqual({ median: 20, min: 10, max: 20 });
    // A ref figure of 0 has no ratio; the other pairs still count.
    expect(r.b.ratio).toEqual({ median: 0.5, min: 0.5, max: 0.5 });
    // A figure neither side reports.
    expect(r.c).toEqual({ ratio: null, tree: null, ref: null });
  });
});
