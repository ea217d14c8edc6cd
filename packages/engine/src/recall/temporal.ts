/**
 * The temporal signal: dates and relative time expressions named in a query, resolved against the query time into
 * intervals, and a score for how close a memory's `occurred_at` lies to them. Pure functions, English expressions.
 */

const DAY = 86_400_000;
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH = '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const COUNT_WORDS: Record<string, number> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  'a couple of': 2, 'a few': 3, several: 3,
};
const UNIT_DAYS: Record<string, number> = { day: 1, week: 7, month: 30.44, year: 365.25 };

export type IntervalKind = 'day' | 'week' | 'month' | 'year';

/** A half-open time interval [start, end) in epoch milliseconds. */
export interface TimeInterval {
  start: number;
  end: number;
  kind: IntervalKind;
}

function monthIndex(name: string): number {
  return MONTHS.findIndex((m) => m.startsWith(name.toLowerCase().slice(0, 3)));
}

/** The intervals a query names, relative to `reference` (the query time). Empty when it names none. */
export function resolveTemporal(query: string, reference: Date): TimeInterval[] {
  const s = query.toLowerCase();
  const out: TimeInterval[] = [];
  const used: Array<[number, number]> = [];
  const y = reference.getUTCFullYear();
  const m = reference.getUTCMonth();
  const today = Date.UTC(y, m, reference.getUTCDate());
  const push = (start: number, end: number, kind: IntervalKind) => {
    if (Number.isFinite(start) && Number.isFinite(end) && end > start) out.push({ start, end, kind });
  };
  const take = (re: RegExp, fn: (match: RegExpExecArray) => void) => {
    for (const match of s.matchAll(re)) {
      const from = match.index;
      const to = from + match[0].length;
      if (used.some(([a, b]) => from < b && to > a)) continue;
      used.push([from, to]);
      fn(match as RegExpExecArray);
    }
  };
  const num = (v: string | undefined) => Number(v);
  // Exact days: "7 July, 2023", "7th of July 2023", "July 7, 2023", "2023-07-07".
  take(new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\.?,?\\s+(\\d{4})\\b`, 'g'), (x) => {
    const t = Date.UTC(num(x[3]), monthIndex(x[2] ?? ''), num(x[1]));
    push(t, t + DAY, 'day');
  });
  take(new RegExp(`\\b${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'g'), (x) => {
    const t = Date.UTC(num(x[3]), monthIndex(x[1] ?? ''), num(x[2]));
    push(t, t + DAY, 'day');
  });
  take(/\b(\d{4})-(\d{2})-(\d{2})\b/g, (x) => {
    const t = Date.UTC(num(x[1]), num(x[2]) - 1, num(x[3]));
    push(t, t + DAY, 'day');
  });
  // Months: "July 2023"; "in July" (the latest July not after the query time).
  take(new RegExp(`\\b${MONTH}\\.?,?\\s+(\\d{4})\\b`, 'g'), (x) => {
    const mi = monthIndex(x[1] ?? '');
    push(Date.UTC(num(x[2]), mi, 1), Date.UTC(num(x[2]), mi + 1, 1), 'month');
  });
  take(new RegExp(`\\b(?:in|during|since|of|last)\\s+${MONTH}\\b`, 'g'), (x) => {
    const mi = monthIndex(x[1] ?? '');
    const year = mi <= m ? y : y - 1;
    push(Date.UTC(year, mi, 1), Date.UTC(year, mi + 1, 1), 'month');
  });
  take(/\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b/g, (x) => push(Date.UTC(num(x[1]), 0, 1), Date.UTC(num(x[1]) + 1, 0, 1), 'year'));
  // Relative expressions.
  take(/\b(?:the\s+)?day before yesterday\b/g, () => push(today - 2 * DAY, today - DAY, 'day'));
  take(/\byesterday\b/g, () => push(today - DAY, today, 'day'));
  take(/\b(?:today|tonight|this morning)\b/g, () => push(today, today + DAY, 'day'));
  take(/\blast\s+(?:week|weekend)\b/g, () => push(today - 14 * DAY, today, 'week'));
  take(/\bthis\s+(?:week|weekend)\b/g, () => push(today - 7 * DAY, today + DAY, 'week'));
  take(/\blast\s+month\b/g, () => push(Date.UTC(y, m - 1, 1), Date.UTC(y, m, 1), 'month'));
  take(/\bthis\s+month\b/g, () => push(Date.UTC(y, m, 1), Date.UTC(y, m + 1, 1), 'month'));
  take(/\blast\s+year\b/g, () => push(Date.UTC(y - 1, 0, 1), Date.UTC(y, 0, 1), 'year'));
  take(/\bthis\s+year\b/g, () => push(Date.UTC(y, 0, 1), Date.UTC(y + 1, 0, 1), 'year'));
  take(/\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|an?|a couple of|a few|several)\s+(day|week|month|year)s?\s+ago\b/g, (x) => {
    const count = COUNT_WORDS[x[1] ?? ''] ?? num(x[1]);
    const unit = x[2] ?? 'day';
    const days = UNIT_DAYS[unit] ?? 1;
    const centre = today - count * days * DAY;
    const half = Math.max(1, days * 0.5) * DAY;
    push(centre - half, centre + half, unit as IntervalKind);
  });
  return out;
}

/**
 * How well a time matches the intervals: 1 inside one, decaying exponentially with the distance outside it (scale: a
 * quarter of the interval's length, at least three days), 0 when there are no intervals or no time.
 */
export function temporalScore(intervals: readonly TimeInterval[], time: number | null): number {
  if (time === null || !Number.isFinite(time)) return 0;
  let best = 0;
  for (const iv of intervals) {
    const tau = Math.max(3 * DAY, 0.25 * (iv.end - iv.start));
    const distance = time < iv.start ? iv.start - time : time >= iv.end ? time - iv.end : 0;
    best = Math.max(best, Math.exp(-distance / tau));
  }
  return best;
}

/**
 * The window the temporal arm searches, [from, to) in epoch milliseconds: the intervals' span, widened by a week
 * before and a month after.
 */
export function temporalWindow(intervals: readonly TimeInterval[]): { from: number; to: number } | undefined {
  if (intervals.length === 0) return undefined;
  const start = Math.min(...intervals.map((i) => i.start));
  const end = Math.max(...intervals.map((i) => i.end));
  return { from: start - 7 * DAY, to: end + 30 * DAY };
}
