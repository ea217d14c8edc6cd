import { maxOf } from '../util/extremes.js';

/** Plain-text tables for people: padded columns, the last one cut to the terminal width. */
export function table(headers: string[], rows: string[][], width = 120): string {
  const clean = (cell: string) => cell.replace(/\s+/g, ' ').trim();
  const all = [headers, ...rows.map((r) => r.map(clean))];
  const last = headers.length - 1;
  const widths = headers.map((_, i) =>
    maxOf(
      all.map((r) => (r[i] ?? '').length),
      0,
    ),
  );
  const fixed = widths.slice(0, last).reduce((a, b) => a + b + 2, 0);
  const lastWidth = Math.max(20, width - fixed);
  const lines = all.map((r) =>
    r
      .map((cell, i) => (i === last ? truncate(cell, lastWidth) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
  return `${lines.join('\n')}\n`;
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** `2025-03-01T10:00:00.000Z` -> `2025-03-01 10:00`. */
export function shortDate(iso: string | null | undefined): string {
  if (!iso) return '';
  return iso.replace('T', ' ').slice(0, 16);
}
