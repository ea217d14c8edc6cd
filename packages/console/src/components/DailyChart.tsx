// The month's daily counts as a uPlot line chart, with the same numbers in a table for screen readers.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatDay } from '../format';
import type { DailyUsage } from '../types';

const SERIES: Array<{ key: 'memories' | 'recalls' | 'reflects'; label: string; color: string }> = [
  { key: 'memories', label: 'Memories', color: '#1f4e79' },
  { key: 'recalls', label: 'Recalls', color: '#2e7d32' },
  { key: 'reflects', label: 'Reflects', color: '#b45309' },
];

const DAY_SECONDS = 86_400;

/** The x range: the days shown, or a whole day around the only one (a zero-width range would draw nothing). */
const dayRange = (_u: uPlot, min: number, max: number): uPlot.Range.MinMax =>
  min === max ? [min - DAY_SECONDS / 2, max + DAY_SECONDS / 2] : [min, max];

/** Legend values: the day or count under the cursor, and nothing (not "--") while the cursor is elsewhere. */
const dayValue = (_u: uPlot, v: number | null): string =>
  v === null ? '' : new Date(v * 1000).toISOString().slice(0, 10);
const countValue = (_u: uPlot, v: number | null): string => (v === null ? '' : String(v));

export function DailyChart({ days }: { days: DailyUsage[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (el === null) return undefined;
    const x = days.map((d) => Date.parse(d.date) / 1000);
    const data: uPlot.AlignedData = [x, ...SERIES.map((s) => days.map((d) => d[s.key]))];
    const width = (): number => Math.max(280, Math.min(el.clientWidth, 960));
    const plot = new uPlot(
      {
        width: width(),
        height: 240,
        scales: { x: { time: true, range: dayRange } },
        series: [
          { label: 'Day', value: dayValue },
          ...SERIES.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            points: { show: true, size: 8 },
            value: countValue,
          })),
        ],
        axes: [{}, { label: 'per day' }],
      },
      data,
      el,
    );
    const onResize = (): void => plot.setSize({ width: width(), height: 240 });
    window.addEventListener('resize', onResize);
    return () => {
      window.removeEventListener('resize', onResize);
      plot.destroy();
    };
  }, [days]);
  return (
    <figure class="chart">
      <div ref={box} aria-hidden="true" />
      <figcaption>
        <details>
          <summary>Daily counts as a table</summary>
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                {SERIES.map((s) => (
                  <th scope="col" key={s.key}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr key={d.date}>
                  <td>{formatDay(d.date)}</td>
                  {SERIES.map((s) => (
                    <td key={s.key}>{d[s.key]}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      </figcaption>
    </figure>
  );
}
