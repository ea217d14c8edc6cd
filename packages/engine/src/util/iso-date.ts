/**
 * The date forms the API accepts wherever it takes a date: ISO 8601 / RFC 3339 date-times (`Z`, `+02:00`, `+0200`,
 * `+02`, fractions, a space instead of `T`) and plain dates. A date-time without an offset and a plain date are UTC.
 */

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i;

/** The earliest and latest instants the database stores (0001-01-01 to the end of 9999, UTC). */
export const FIRST_STORABLE_TIME = Date.parse('0001-01-01T00:00:00Z');
export const LAST_STORABLE_TIME = Date.parse('9999-12-31T23:59:59.999Z');

/** An example of the form, for error messages. */
export const ISO_DATE_EXAMPLE = '2024-01-15T10:30:00Z';

/** Whether `text` (already trimmed) has one of the accepted forms; `isoDate` may still find it is no real date. */
export function isIsoDateText(text: string): boolean {
  return DATE_ONLY.test(text) || DATE_TIME.test(text);
}

/**
 * The instant `text` names (a text isIsoDateText accepts); an invalid Date when it names none (2024-13-01, and
 * 2024-02-30, which JavaScript's parser would roll over into March).
 */
export function isoDate(text: string): Date {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  if (day > daysIn(year, month)) return new Date(NaN);
  let normal = text.replace(' ', 'T');
  if (DATE_ONLY.test(normal)) normal += 'T00:00:00Z';
  else if (!/(Z|[+-]\d{2}(:?\d{2})?)$/i.test(normal)) normal += 'Z';
  normal = normal.replace(/([+-]\d{2})(\d{2})$/, '$1:$2').replace(/([+-]\d{2})$/, '$1:00');
  return new Date(normal);
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in a month of the proleptic Gregorian calendar; 31 for a month that does not exist (the parser refuses it). */
function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : (DAYS[month - 1] ?? 31);
}
