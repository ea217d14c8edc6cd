/** Texts remembered at most; past it the cache starts over. */
const MAX_DATES = 50_000;

const byText = new Map<string, Date>();

/**
 * The Date of a stored memory's ISO timestamp, one shared Date per text: recalls answer the same memories again and
 * again, and parsing each result's dates anew cost more than the rest of its conversion. Shared, so no caller may
 * change a Date it gets (none does: answers only read them).
 */
export function storedDate(iso: string): Date {
  let date = byText.get(iso);
  if (date === undefined) {
    if (byText.size >= MAX_DATES) byText.clear();
    date = new Date(iso);
    byText.set(iso, date);
  }
  return date;
}
