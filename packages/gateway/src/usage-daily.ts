// Daily usage of a project within the month, for the console's chart. Counted units are added to the day on which
// the gateway writes them (within its flush interval of the request), so the days of a month add up to the month's
// counter, except units counted for a gateway that stopped without writing them (in the month's total only).
import { METRICS, periodOf, type Metric } from './plans.js';

export interface DailyUsage {
  /** The UTC day, `YYYY-MM-DD`. */
  date: string;
  memories: number;
  recalls: number;
  reflects: number;
}

const dayText = (d: Date): string => d.toISOString().slice(0, 10);

/** The day units written at `now` count for: today, or the last day of their month when written after it ended. */
export function dayOfWrite(period: string, now: Date): string {
  const today = dayText(now);
  if (today.startsWith(`${period}-`)) return today;
  const [year, month] = period.split('-').map(Number);
  return dayText(new Date(Date.UTC(year ?? 1970, month ?? 1, 0)));
}

/** A stored day's count of one metric (store.ts reads them). */
export interface DayCount {
  day: string;
  metric: string;
  used: string;
}

/** The first and last day (`YYYY-MM-DD`) of the month of `now` up to today. */
export function daysSoFar(now: Date): { from: string; to: string } {
  const { period } = periodOf(now);
  return { from: `${period}-01`, to: dayText(now) };
}

/** Every day of the month of `now` up to today, with its counts (zero where nothing was counted). */
export function dailyUsage(counts: readonly DayCount[], now: Date): DailyUsage[] {
  const { period } = periodOf(now);
  const first = new Date(`${period}-01T00:00:00Z`);
  const days: DailyUsage[] = [];
  for (let d = first; d.getTime() <= now.getTime(); d = new Date(d.getTime() + 86_400_000)) {
    days.push({ date: dayText(d), memories: 0, recalls: 0, reflects: 0 });
  }
  for (const row of counts) {
    const day = days.find((d) => d.date === row.day);
    if (day !== undefined && METRICS.includes(row.metric as Metric)) day[row.metric as Metric] = Number(row.used);
  }
  return days;
}
