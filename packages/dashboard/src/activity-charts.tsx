/** @jsxImportSource hono/jsx */
// Time-series charts for the Activity page, drawn on the server as SVG: a title, a y axis with round
// ticks and its unit, a time axis with labelled ticks, stacked columns or lines, a legend, and the
// figures as a table for screen readers.

const W = 640;
const H = 240;
/** The y axis's title is centred at x = 14; its tick labels end at the plot's left edge minus 6. */
const Y_TITLE_X = 14;
/** Room for tick labels: about 6.5 px a character at 11 px, clear of the title's half line height. */
const leftFor = (labels: string[]) =>
  Math.max(64, Y_TITLE_X + 10 + Math.ceil(Math.max(...labels.map((l) => l.length)) * 6.5) + 6);
const RIGHT = 12;
const TOP = 12;
const BOTTOM = 44;
const GRID = "#d9dde3";
const INK = "#545b66";
const SERIES_COLOURS = ["#1f5fbf", "#c2410c", "#6b21a8"] as const;

export interface Series {
  label: string;
  values: Array<number | null>;
}

/** Round ticks from 0 covering `max`: steps of 1, 2 or 5 times a power of ten, whole ones for counts. */
function niceTicks(max: number, integer: boolean, count = 4): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const nice = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw) ?? raw;
  const step = integer ? Math.max(1, nice) : nice;
  const ticks: number[] = [];
  for (let t = 0; t <= max + step * 0.999; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

export function TimeSeriesChart(props: {
  title: string;
  /** The y axis's title, with its unit, e.g. "Deliveries per 15 min". */
  yTitle: string;
  times: number[];
  series: Series[];
  kind: "stacked" | "lines";
  /** Counts: ticks at whole numbers. */
  integer?: boolean;
  format: (v: number) => string;
  timeLabel: (ms: number) => string;
  xTitle: string;
  caption: string;
  id: string;
}) {
  const n = Math.max(props.times.length, 1);
  const totals = props.times.map((_, i) =>
    props.kind === "stacked"
      ? props.series.reduce((s, x) => s + (x.values[i] ?? 0), 0)
      : Math.max(0, ...props.series.map((x) => x.values[i] ?? 0)),
  );
  const ticks = niceTicks(Math.max(0, ...totals), props.integer === true);
  const left = leftFor(ticks.map(props.format));
  const plotW = W - left - RIGHT;
  const plotH = H - TOP - BOTTOM;
  const top = ticks[ticks.length - 1];
  const y = (v: number) => TOP + plotH - (plotH * v) / top;
  const slot = plotW / n;
  const xMid = (i: number) => left + slot * (i + 0.5);
  const every = Math.ceil(n / 6);
  const empty = totals.every((t) => t === 0);
  return (
    <figure class="chart card" aria-labelledby={`${props.id}-t`}>
      <h3 id={`${props.id}-t`}>{props.title}</h3>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${props.title}. ${props.caption}`}>
        {ticks.map((t) => (
          <g>
            <line x1={left} x2={W - RIGHT} y1={y(t)} y2={y(t)} stroke={GRID} />
            <text x={left - 6} y={y(t) + 4} text-anchor="end" font-size="11" fill={INK}>
              {props.format(t)}
            </text>
          </g>
        ))}
        <line x1={left} x2={left} y1={TOP} y2={TOP + plotH} stroke={INK} />
        <line x1={left} x2={W - RIGHT} y1={TOP + plotH} y2={TOP + plotH} stroke={INK} />
        <text
          transform={`translate(${Y_TITLE_X} ${TOP + plotH / 2}) rotate(-90)`}
          text-anchor="middle"
          font-size="11"
          fill={INK}
        >
          {props.yTitle}
        </text>
        {props.times.map((t, i) =>
          i % every === 0 ? (
            <g>
              <line x1={xMid(i)} x2={xMid(i)} y1={TOP + plotH} y2={TOP + plotH + 4} stroke={INK} />
              <text x={xMid(i)} y={TOP + plotH + 16} text-anchor="middle" font-size="11" fill={INK}>
                {props.timeLabel(t)}
              </text>
            </g>
          ) : null,
        )}
        <text x={left + plotW / 2} y={H - 6} text-anchor="middle" font-size="11" fill={INK}>
          {props.xTitle}
        </text>
        {props.kind === "stacked"
          ? props.times.map((_, i) => {
              let base = 0;
              return props.series.map((s, k) => {
                const v = s.values[i] ?? 0;
                const from = base;
                base += v;
                return v > 0 ? (
                  <rect
                    x={left + slot * i + slot * 0.12}
                    width={Math.max(1, slot * 0.76)}
                    y={y(from + v)}
                    height={Math.max(0.5, y(from) - y(from + v))}
                    fill={SERIES_COLOURS[k]}
                  />
                ) : null;
              });
            })
          : props.series.map((s, k) => (
              <g>
                <polyline
                  fill="none"
                  stroke={SERIES_COLOURS[k]}
                  stroke-width="2"
                  points={s.values
                    .map((v, i) => (v == null ? null : `${xMid(i).toFixed(1)},${y(v).toFixed(1)}`))
                    .filter(Boolean)
                    .join(" ")}
                />
                {/* Marks, so that a lone bucket with figures shows too. */}
                {s.values.map((v, i) =>
                  v == null ? null : (
                    <circle cx={xMid(i).toFixed(1)} cy={y(v).toFixed(1)} r="2.5" fill={SERIES_COLOURS[k]} />
                  ),
                )}
              </g>
            ))}
        {empty && (
          <text x={left + plotW / 2} y={TOP + plotH / 2} text-anchor="middle" font-size="13" fill={INK}>
            Nothing in this range
          </text>
        )}
      </svg>
      <div class="legend" aria-hidden="true">
        {props.series.map((s, k) => (
          <span>
            <i class={`c${k}`}></i>
            {s.label}
          </span>
        ))}
      </div>
      <figcaption>{props.caption}</figcaption>
      <div class="sr">
        <table>
          <caption>{props.title}</caption>
          <thead>
            <tr>
              <th scope="col">{props.xTitle}</th>
              {props.series.map((s) => (
                <th scope="col">{s.label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.times.map((t, i) => (
              <tr>
                <th scope="row">{new Date(t).toISOString()}</th>
                {props.series.map((s) => (
                  <td>{s.values[i] == null ? "—" : props.format(s.values[i]!)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
