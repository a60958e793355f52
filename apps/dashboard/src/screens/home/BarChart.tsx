/**
 * Home's bar charts (revenue per day, MRR per month): an inline SVG (no chart library) whose
 * colour follows the scheme (currentColor = --accent), with a value axis (nought, half, the
 * highest), a few axis labels, and the same figures in a visually hidden table, so a screen reader
 * gets the numbers; the SVG itself is one image named by its summary.
 */
import { useId } from 'react';

export interface Bar {
  key: string;
  value: number;
  /** The bar's tooltip. */
  title: string;
  /** The axis label under the bar (shown for the first, middle and last bars). */
  axisLabel: string;
  /** The table's row: its header, then its cells. */
  row: [string, ...string[]];
}

const WIDTH = 600;
const HEIGHT = 160;
const GAP = 4;

export function BarChart({
  bars,
  summary,
  formatValue,
  caption,
  columns,
}: {
  bars: readonly Bar[];
  summary: string;
  formatValue: (value: number) => string;
  caption: string;
  columns: [string, ...string[]];
}) {
  const titleId = useId();
  const max = Math.max(0, ...bars.map((bar) => bar.value));
  const slot = WIDTH / Math.max(bars.length, 1);
  const first = bars[0];
  const last = bars[bars.length - 1];
  const middle = bars[Math.floor((bars.length - 1) / 2)];
  const ticks = [max, max / 2, 0];
  return (
    <figure className="m-0">
      <div className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-3">
        <div
          className="flex h-40 flex-col justify-between text-right text-xs text-muted tabular-nums"
          aria-hidden="true"
        >
          {ticks.map((tick, index) => (
            <span key={index} className="-my-2 leading-4">
              {formatValue(tick)}
            </span>
          ))}
        </div>
        <svg
          className="block h-40 w-full border-b border-l border-line-strong text-accent"
          viewBox={`0 0 ${WIDTH} ${HEIGHT + 1}`}
          role="img"
          aria-labelledby={titleId}
          preserveAspectRatio="none"
          focusable="false"
        >
          <title id={titleId}>{summary}</title>
          {[0.5, 0].map((share) => (
            <line
              key={share}
              x1={0}
              x2={WIDTH}
              y1={share * HEIGHT + 0.5}
              y2={share * HEIGHT + 0.5}
              stroke="currentColor"
              strokeOpacity={0.15}
              vectorEffect="non-scaling-stroke"
            />
          ))}
          {bars.map((bar, index) => {
            const height = max > 0 ? Math.max((bar.value / max) * HEIGHT, bar.value > 0 ? 2 : 0) : 0;
            return (
              <rect
                key={bar.key}
                x={index * slot + GAP / 2}
                y={HEIGHT - height}
                width={slot - GAP}
                height={height}
                fill="currentColor"
              >
                <title>{bar.title}</title>
              </rect>
            );
          })}
        </svg>
        {first && last && (
          <div className="col-start-2 mt-1 flex justify-between text-xs text-muted" aria-hidden="true">
            <span>{first.axisLabel}</span>
            {middle && middle !== first && middle !== last && <span>{middle.axisLabel}</span>}
            <span>{last.axisLabel}</span>
          </div>
        )}
      </div>
      {/* A table is not clipped by .visually-hidden itself (tables grow to their rows): its wrapper is. */}
      <div className="visually-hidden">
        <table>
          <caption>{caption}</caption>
          <thead>
            <tr>
              {columns.map((column) => (
                <th key={column} scope="col">
                  {column}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {bars.map((bar) => (
              <tr key={bar.key}>
                <th scope="row">{bar.row[0]}</th>
                {bar.row.slice(1).map((cell, index) => (
                  <td key={index}>{cell}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
