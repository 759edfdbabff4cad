/** @jsxImportSource hono/jsx */
// Charts as inline SVG drawn on the server: no script, no CDN, printable, and each one carries its
// figures as a text table for screen readers.

const W = 640;
const PALETTE = { a: "#1f5fbf", b: "#c2410c", grid: "#d9dde3", text: "#545b66" };

export interface Bar {
  label: string;
  value: number;
  text: string;
}

/** Horizontal bars, e.g. each tenant's share of worker time. */
export function BarChart(props: { title: string; bars: Bar[]; caption: string; empty: string }) {
  if (props.bars.length === 0)
    return (
      <figure class="chart card">
        <figcaption>
          {props.title}: {props.empty}
        </figcaption>
      </figure>
    );
  const w0 = 1000;
  const rowH = 26;
  const labelW = 170;
  const h = props.bars.length * rowH + 8;
  const max = Math.max(...props.bars.map((b) => b.value), 1e-9);
  return (
    <figure class="chart card">
      <svg viewBox={`0 0 ${w0} ${h}`} role="img" aria-label={props.title}>
        <title>{props.title}</title>
        {props.bars.map((b, i) => {
          const y = 4 + i * rowH;
          const w = Math.max(2, ((w0 - labelW - 200) * b.value) / max);
          return (
            <g>
              <text x={labelW - 8} y={y + 16} text-anchor="end" font-size="13" fill={PALETTE.text}>
                {clip(b.label, 22)}
              </text>
              <rect x={labelW} y={y + 3} width={w} height={rowH - 8} rx="3" fill={PALETTE.a} />
              <text x={labelW + w + 6} y={y + 16} font-size="13" fill="#15171a">
                {b.text}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>{props.caption}</figcaption>
      <table class="sr">
        <caption>{props.title}</caption>
        <tbody>
          {props.bars.map((b) => (
            <tr>
              <th scope="row">{b.label}</th>
              <td>{b.text}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

export interface MinutePoint {
  minute: number;
  a: number;
  b: number;
}

/** Columns per minute; series b stacked on a (stacked) or drawn as a marker (not stacked). */
export function MinuteChart(props: {
  title: string;
  caption: string;
  points: MinutePoint[];
  aLabel: string;
  bLabel: string;
  stacked: boolean;
  format: (v: number) => string;
}) {
  const h = 200;
  const left = 56;
  const bottom = 24;
  const plotH = h - bottom - 10;
  const n = Math.max(props.points.length, 1);
  const slot = (W - left - 8) / n;
  const max = Math.max(1e-9, ...props.points.map((p) => (props.stacked ? p.a + p.b : Math.max(p.a, p.b))));
  const y = (v: number) => 10 + plotH - (plotH * v) / max;
  const ticks = [0, max / 2, max];
  return (
    <figure class="chart card">
      <svg viewBox={`0 0 ${W} ${h}`} role="img" aria-label={props.title}>
        <title>{props.title}</title>
        {ticks.map((t) => (
          <g>
            <line x1={left} x2={W - 8} y1={y(t)} y2={y(t)} stroke={PALETTE.grid} />
            <text x={left - 6} y={y(t) + 4} text-anchor="end" font-size="11" fill={PALETTE.text}>
              {props.format(t)}
            </text>
          </g>
        ))}
        {props.points.map((p, i) => {
          const x = left + i * slot + slot * 0.15;
          const bw = Math.max(1, slot * 0.7);
          const label = new Date(p.minute).toISOString().slice(11, 16);
          const showLabel = i % Math.ceil(n / 8) === 0;
          return (
            <g>
              <rect x={x} y={y(p.a)} width={bw} height={Math.max(0, 10 + plotH - y(p.a))} fill={PALETTE.a} />
              {props.stacked ? (
                <rect x={x} y={y(p.a + p.b)} width={bw} height={Math.max(0, y(p.a) - y(p.a + p.b))} fill={PALETTE.b} />
              ) : (
                p.b > 0 && <rect x={x} y={y(p.b) - 2} width={bw} height="4" fill={PALETTE.b} />
              )}
              {showLabel && (
                <text x={x + bw / 2} y={h - 6} text-anchor="middle" font-size="11" fill={PALETTE.text}>
                  {label}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <div class="legend" aria-hidden="true">
        <span>
          <i class="a"></i>
          {props.aLabel}
        </span>
        <span>
          <i class="b"></i>
          {props.bLabel}
        </span>
      </div>
      <figcaption>{props.caption}</figcaption>
      <table class="sr">
        <caption>{props.title}</caption>
        <thead>
          <tr>
            <th>Minute (UTC)</th>
            <th>{props.aLabel}</th>
            <th>{props.bLabel}</th>
          </tr>
        </thead>
        <tbody>
          {props.points.map((p) => (
            <tr>
              <td>{new Date(p.minute).toISOString().slice(11, 16)}</td>
              <td>{props.format(p.a)}</td>
              <td>{props.format(p.b)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

/** Minute buckets from the window's start to now, zero where nothing happened. */
export function fillMinutes<T extends { minute: number }>(
  rows: T[],
  nowMs: number,
  minutes: number,
  empty: (m: number) => T,
): T[] {
  const byMinute = new Map(rows.map((r) => [r.minute, r]));
  const end = Math.floor(nowMs / 60_000) * 60_000;
  const out: T[] = [];
  for (let m = end - (minutes - 1) * 60_000; m <= end; m += 60_000) out.push(byMinute.get(m) ?? empty(m));
  return out;
}

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
