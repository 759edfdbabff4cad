// Small text formatters for the pages.

export function fmtMs(ms: number | null | undefined): string {
  if (ms == null) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

export function fmtCount(n: number, cap: number): string {
  return n >= cap ? `${cap.toLocaleString("en")}+` : n.toLocaleString("en");
}

export function pct(x: number): string {
  return `${(x * 100).toFixed(x < 0.1 ? 1 : 0)} %`;
}

/** How an instant reads on every page (en-GB, in the viewer's zone), on the server and in live.js. */
export const TIME_FORMAT: Intl.DateTimeFormatOptions = {
  weekday: "short",
  day: "2-digit",
  month: "short",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23",
  timeZoneName: "short",
};
