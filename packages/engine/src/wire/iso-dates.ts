const texts = new WeakMap<Date, string>();

/**
 * `date.toISOString()`, remembered per Date: the service hands out one shared Date per stored timestamp
 * (service/stored-dates.ts), so a memory recalled again is written out without formatting its dates again.
 */
export function isoText(date: Date): string {
  let text = texts.get(date);
  if (text === undefined) {
    text = date.toISOString();
    texts.set(date, text);
  }
  return text;
}
