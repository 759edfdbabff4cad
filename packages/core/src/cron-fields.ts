// Cron field grammar and compiled field sets. cron.ts builds on this; nothing here knows about
// time zones. We validate the grammar ourselves (so a 400 can say *which* field is wrong and why) and
// let cron-parser expand each valid field into its values.
import { CronExpressionParser } from "cron-parser";

const CRON_ALIASES: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[]; // index = value
}

const MONTH_NAMES = ["", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

// Always six specs; a 5-field expression gets second "0" prepended.
const SPECS: readonly FieldSpec[] = [
  { name: "second", min: 0, max: 59 },
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day-of-month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: MONTH_NAMES },
  { name: "day-of-week", min: 0, max: 7, names: DAY_NAMES }, // 7 = Sunday, as in Vixie cron
];

export interface CompiledCron {
  seconds: number[]; // sorted
  minutes: number[];
  hours: number[];
  dom: boolean[]; // index 1..31
  months: boolean[]; // index 1..12
  dow: boolean[]; // index 0..6
  /** Vixie: a day field starting with `*` (or `?`) is "unrestricted"; both restricted → OR. */
  domStar: boolean;
  dowStar: boolean;
  /** Hour field is `*`-based: no gap catch-up fire, fires at both fall-back occurrences. */
  intervalLike: boolean;
}

/** Returns the six raw fields, or an error message. */
export function splitFields(expr: string): { fields: string[]; hasSeconds: boolean } | string {
  const trimmed = expr.trim();
  if (trimmed === "") return "cron expression is empty";
  if (trimmed.startsWith("@")) {
    const alias = CRON_ALIASES[trimmed.toLowerCase()];
    if (!alias) return `unknown cron alias "${trimmed}" (use one of ${Object.keys(CRON_ALIASES).join(", ")})`;
    return { fields: ["0", ...alias.split(" ")], hasSeconds: false };
  }
  const parts = trimmed.split(/\s+/);
  if (parts.length === 5) return { fields: ["0", ...parts], hasSeconds: false };
  if (parts.length === 6) return { fields: parts, hasSeconds: true };
  return `cron expression must have 5 fields (minute hour day-of-month month day-of-week) or 6 (with seconds first); found ${parts.length}`;
}

function parseValue(token: string, spec: FieldSpec): number | string {
  if (/^\d+$/.test(token)) {
    const n = Number(token);
    if (n < spec.min || n > spec.max) return `${spec.name} value ${n} is out of range ${spec.min}-${spec.max}`;
    return n;
  }
  const idx = spec.names?.indexOf(token.toLowerCase()) ?? -1;
  if (idx > 0 || (idx === 0 && spec.name === "day-of-week")) return idx;
  return `${spec.name} field: "${token}" is not a number${spec.names ? " or name" : ""}`;
}

/** Checks one field's grammar: comma list of `*`, `?`, `v`, `a-b`, each with optional `/step`. */
function checkField(raw: string, spec: FieldSpec): string | null {
  if (/[LW#H]/.test(raw) && !spec.names) return `${spec.name} field "${raw}": L, W, # and H are not supported`;
  for (const item of raw.split(",")) {
    const m = /^([^/]+)(?:\/(.*))?$/.exec(item);
    if (!m) return `${spec.name} field "${raw}": empty list item`;
    const [, base, step] = m;
    if (step !== undefined) {
      if (!/^\d+$/.test(step)) return `${spec.name} field "${raw}": step "${step}" is not a number`;
      const s = Number(step);
      if (s < 1 || s > spec.max - spec.min + 1)
        return `${spec.name} field "${raw}": step ${s} is out of range 1-${spec.max - spec.min + 1}`;
    }
    if (base === "*") continue;
    if (base === "?") {
      if (spec.name === "day-of-month" || spec.name === "day-of-week") continue;
      return `${spec.name} field: "?" is only allowed in day-of-month and day-of-week`;
    }
    const range = base.split("-");
    if (range.length > 2) return `${spec.name} field: "${base}" is not a valid range`;
    const vals: number[] = [];
    for (const tok of range) {
      const v = parseValue(tok, spec);
      if (typeof v === "string") return v;
      vals.push(v);
    }
    if (vals.length === 2 && vals[0] > vals[1]) return `${spec.name} field: range ${base} runs backwards`;
  }
  return null;
}

function expand(fields: string[]): {
  second: number[];
  minute: number[];
  hour: number[];
  dom: number[];
  month: number[];
  dow: number[];
} {
  // Month is parsed separately: cron-parser rejects "31" with month "4" itself, but we want to
  // report impossible dates with our own "can never fire" message.
  const main = CronExpressionParser.parse(
    [fields[0], fields[1], fields[2], fields[3], "*", fields[5]].join(" "),
  ).fields;
  const mon = CronExpressionParser.parse(`0 0 0 * ${fields[4]} *`).fields;
  return {
    second: [...main.second.values] as number[],
    minute: [...main.minute.values] as number[],
    hour: [...main.hour.values] as number[],
    dom: main.dayOfMonth.values.filter((v) => typeof v === "number") as number[],
    month: [...mon.month.values] as number[],
    dow: main.dayOfWeek.values.filter((v) => typeof v === "number") as number[],
  };
}

/** Compiles six raw fields; returns an error message for bad grammar. */
export function compileFields(fields: string[]): CompiledCron | string {
  for (let i = 0; i < 6; i++) {
    const err = checkField(fields[i], SPECS[i]);
    if (err) return err;
  }
  let v: ReturnType<typeof expand>;
  try {
    v = expand(fields);
  } catch (e) {
    return `invalid cron expression: ${(e as Error).message}`;
  }
  const flags = (vals: number[], size: number) => {
    const arr = new Array<boolean>(size).fill(false);
    for (const x of vals) arr[x] = true;
    return arr;
  };
  const dow = flags(
    v.dow.map((d) => d % 7),
    7,
  );
  const sorted = (a: number[]) => [...new Set(a)].sort((x, y) => x - y);
  return {
    seconds: sorted(v.second),
    minutes: sorted(v.minute),
    hours: sorted(v.hour),
    dom: flags(v.dom, 32),
    months: flags(v.month, 13),
    dow,
    domStar: /^[*?]/.test(fields[3]),
    dowStar: /^[*?]/.test(fields[5]),
    intervalLike: /^(\*|0-23)(\/\d+)?$/.test(fields[2]),
  };
}

const DAY_MS = 86_400_000;

/** Does the local calendar day (days since 1970-01-01 in wall-clock terms) match? */
export function dayMatches(c: CompiledCron, day: number): boolean {
  const d = new Date(day * DAY_MS);
  if (!c.months[d.getUTCMonth() + 1]) return false;
  const domOk = c.dom[d.getUTCDate()];
  const dowOk = c.dow[d.getUTCDay()];
  if (c.domStar || c.dowStar) return domOk && dowOk;
  return domOk || dowOk; // Vixie: both restricted → either may match
}

function firstAtLeast(sorted: number[], v: number): number {
  for (const x of sorted) if (x >= v) return x;
  return -1;
}

/** Smallest matching second-of-day ≥ fromSec, or -1 if none left today. Skips by field, not by second. */
export function nextTimeOfDay(c: CompiledCron, fromSec: number): number {
  if (fromSec >= 86_400) return -1;
  let h = Math.floor(fromSec / 3600);
  let m = Math.floor((fromSec % 3600) / 60);
  let s = fromSec % 60;
  for (;;) {
    const H = firstAtLeast(c.hours, h);
    if (H < 0) return -1;
    if (H > h) [h, m, s] = [H, 0, 0];
    const M = firstAtLeast(c.minutes, m);
    if (M < 0) {
      [h, m, s] = [h + 1, 0, 0];
      continue;
    }
    if (M > m) [m, s] = [M, 0];
    const S = firstAtLeast(c.seconds, s);
    if (S < 0) {
      if (m + 1 > 59) [h, m, s] = [h + 1, 0, 0];
      else [m, s] = [m + 1, 0];
      continue;
    }
    return h * 3600 + m * 60 + S;
  }
}
