/** @jsxImportSource hono/jsx */
// One way to show an instant on every page: the viewer's time zone, the exact ISO instant on hover.
// The server writes it in UTC in the same format; live.js rewrites it in the browser's zone.

/** The format shared with live.js (keep the two option sets equal). */
const FORMAT: Intl.DateTimeFormatOptions = {
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

const utc = new Intl.DateTimeFormat("en-GB", { ...FORMAT, timeZone: "UTC" });

export function When(props: { d: Date | string | null | undefined }) {
  if (!props.d) return <>—</>;
  const d = new Date(props.d);
  const iso = d.toISOString();
  return (
    <time datetime={iso} title={iso} data-local="">
      {utc.format(d)}
    </time>
  );
}
