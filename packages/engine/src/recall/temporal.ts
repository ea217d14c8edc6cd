// The English locale alone: the package's root also loads every other locale's parsers (hundreds of modules), which
// every engine and CLI start would pay for and recall never uses.
import * as chronoEn from 'chrono-node/en';
import { maxOf, minOf } from '../util/extremes.js';

/**
 * The temporal signal: dates and relative time expressions named in a query, resolved against the query time into
 * intervals, and a score for how close a memory's `occurred_at` lies to them. Pure functions, English expressions.
 */

const DAY = 86_400_000;
const COUNT_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  'a couple of': 2,
  'a few': 3,
  several: 3,
};
const UNIT_DAYS: Record<string, number> = { day: 1, week: 7, month: 30.44, year: 365.25 };
/** "N days|weeks|months|years ago", N in digits or words. */
const COUNTS = '\\d+|one|two|three|four|five|six|seven|eight|nine|ten|an?|a couple of|a few|several';
const UNITS_AGO = new RegExp(`\\b(${COUNTS})\\s+(day|week|month|year)s?\\s+ago\\b`, 'g');
/** A month named alone stands for a time only after one of these words ("in June", not "June called"). */
const BEFORE_LONE_MONTH = /\b(?:in|during|since|of|last)\s+$/;
/**
 * chrono with its calendar-date parsers only: relative and casual phrases have intervals of their own here
 * (relativeExpressions), and a relative phrase must not swallow the date it is relative to ("two weeks before
 * August 11, 2023" names August 11, 2023).
 */
const CALENDAR_PARSERS = new Set([
  'ISOFormatParser',
  'ENMonthNameLittleEndianParser',
  'ENMonthNameMiddleEndianParser',
  'ENMonthNameParser',
]);
const CALENDAR_REFINERS = new Set(['OverlapRemovalRefiner', 'UnlikelyFormatFilter', 'ENUnlikelyFormatFilter']);
const calendar = chronoEn.casual.clone();
calendar.parsers = calendar.parsers.filter((p) => CALENDAR_PARSERS.has(p.constructor.name));
calendar.refiners = calendar.refiners.filter((r) => CALENDAR_REFINERS.has(r.constructor.name));

export type IntervalKind = 'day' | 'week' | 'month' | 'year';

/** A half-open time interval [start, end) in epoch milliseconds. */
export interface TimeInterval {
  start: number;
  end: number;
  kind: IntervalKind;
}

/** The intervals a query names, relative to `reference` (the query time). Empty when it names none. */
export function resolveTemporal(query: string, reference: Date): TimeInterval[] {
  const s = query.toLowerCase();
  const out: TimeInterval[] = [];
  const used: Array<[number, number]> = [];
  const claim = (from: number, to: number): boolean => {
    if (used.some(([a, b]) => from < b && to > a)) return false;
    used.push([from, to]);
    return true;
  };
  const push = (start: number, end: number, kind: IntervalKind) => {
    if (Number.isFinite(start) && Number.isFinite(end) && end > start) out.push({ start, end, kind });
  };
  for (const found of calendarDates(s, reference)) {
    if (claim(found.from, found.to)) push(found.start, found.end, found.kind);
  }
  for (const [pattern, resolve] of relativeExpressions(reference)) {
    for (const match of s.matchAll(pattern)) {
      if (!claim(match.index, match.index + match[0].length)) continue;
      const interval = resolve(match);
      if (interval) push(interval.start, interval.end, interval.kind);
    }
  }
  return out;
}

/**
 * Calendar dates chrono finds: a day ("7 July, 2023", "July 7, 2023", "2023-07-07"), a month of a year
 * ("July 2023"), or a month without a year after "in", "during", "since", "of" or "last": the whole of the latest such
 * month not after the query time. Positions are where each phrase lies in the query.
 */
function calendarDates(query: string, reference: Date): Array<TimeInterval & { from: number; to: number }> {
  const out: Array<TimeInterval & { from: number; to: number }> = [];
  for (const r of calendar.parse(query, { instant: reference, timezone: 0 })) {
    const c = r.start;
    const span = { from: r.index, to: r.index + r.text.length };
    const month = (c.get('month') ?? 1) - 1;
    if (!c.isCertain('month')) continue;
    if (c.isCertain('year') && c.isCertain('day')) {
      const t = Date.UTC(c.get('year') ?? 0, month, c.get('day') ?? 1);
      out.push({ ...span, start: t, end: t + DAY, kind: 'day' });
    } else if (c.isCertain('year')) {
      const year = c.get('year') ?? 0;
      out.push({ ...span, start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1), kind: 'month' });
    } else if (BEFORE_LONE_MONTH.test(query.slice(0, r.index))) {
      const year = month <= reference.getUTCMonth() ? reference.getUTCFullYear() : reference.getUTCFullYear() - 1;
      out.push({ ...span, start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1), kind: 'month' });
    }
  }
  return out;
}

type Resolver = (match: RegExpMatchArray) => TimeInterval | undefined;

/**
 * Years and relative expressions, kept as patterns: their intervals are deliberately wider than the instant chrono
 * gives ("last week" is the fortnight before the query; "two weeks ago" a week centred on that day), and chrono reads
 * no bare year ("in 2023").
 */
function relativeExpressions(reference: Date): Array<[RegExp, Resolver]> {
  const y = reference.getUTCFullYear();
  const m = reference.getUTCMonth();
  const today = Date.UTC(y, m, reference.getUTCDate());
  const span = (start: number, end: number, kind: IntervalKind) => () => ({ start, end, kind });
  return [
    [
      /\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b/g,
      (x) => {
        const year = Number(x[1]);
        return { start: Date.UTC(year, 0, 1), end: Date.UTC(year + 1, 0, 1), kind: 'year' };
      },
    ],
    [/\b(?:the\s+)?day before yesterday\b/g, span(today - 2 * DAY, today - DAY, 'day')],
    [/\byesterday\b/g, span(today - DAY, today, 'day')],
    [/\b(?:today|tonight|this morning)\b/g, span(today, today + DAY, 'day')],
    [/\blast\s+(?:week|weekend)\b/g, span(today - 14 * DAY, today, 'week')],
    [/\bthis\s+(?:week|weekend)\b/g, span(today - 7 * DAY, today + DAY, 'week')],
    [/\blast\s+month\b/g, span(Date.UTC(y, m - 1, 1), Date.UTC(y, m, 1), 'month')],
    [/\bthis\s+month\b/g, span(Date.UTC(y, m, 1), Date.UTC(y, m + 1, 1), 'month')],
    [/\blast\s+year\b/g, span(Date.UTC(y - 1, 0, 1), Date.UTC(y, 0, 1), 'year')],
    [/\bthis\s+year\b/g, span(Date.UTC(y, 0, 1), Date.UTC(y + 1, 0, 1), 'year')],
    [
      UNITS_AGO,
      (x) => {
        const count = COUNT_WORDS[x[1] ?? ''] ?? Number(x[1]);
        const unit = (x[2] ?? 'day') as IntervalKind;
        const days = UNIT_DAYS[unit] ?? 1;
        const centre = today - count * days * DAY;
        const half = Math.max(1, days * 0.5) * DAY;
        return { start: centre - half, end: centre + half, kind: unit };
      },
    ],
  ];
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
  const start = minOf(intervals.map((i) => i.start));
  const end = maxOf(intervals.map((i) => i.end));
  return { from: start - 7 * DAY, to: end + 30 * DAY };
}
