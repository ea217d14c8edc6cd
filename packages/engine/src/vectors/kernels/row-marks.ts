/**
 * Which rows one pass (a keyword match, a time window) has seen, each taken once without a Set: `marks[row]` equals the pass's
 * number once the pass saw the row, and `picks[row]` holds what the pass noted for it (its place in the pass's output).
 */
export class RowMarks {
  marks = new Uint32Array(0);
  picks = new Int32Array(0);
  private pass = 0;

  /** Starts a pass over rows below `rows`; answers its number. */
  begin(rows: number): number {
    if (this.marks.length < rows) {
      this.marks = new Uint32Array(Math.max(1024, Math.ceil(rows * 1.25)));
      this.picks = new Int32Array(this.marks.length);
      this.pass = 0;
    }
    // Numbers are never reused while a row could still hold one: after the last, every mark is cleared.
    if (this.pass === 0xffffffff) {
      this.marks.fill(0);
      this.pass = 0;
    }
    return ++this.pass;
  }
}
