/** @jsxImportSource hono/jsx */
// Charts as inline SVG drawn on the server: no script, no CDN, printable, and each one carries its
// figures as a text table for screen readers.

const PALETTE = { a: "#1f5fbf", text: "#545b66" };

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

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
