/** @jsxImportSource hono/jsx */
// One way to show an instant on every page: the viewer's time zone, the exact ISO instant on hover.
// The server writes it in UTC in the same format; live.js rewrites it in the browser's zone.
import { TIME_FORMAT } from "./format.ts";

const utc = new Intl.DateTimeFormat("en-GB", { ...TIME_FORMAT, timeZone: "UTC" });

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
