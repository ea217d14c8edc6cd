/**
 * A term's postings in a compact copy, packed: rows only ever grow there (compact-bank.ts never reuses a row), so
 * each posting is the gap from the previous row, as a variable-length number (seven bits a byte) whose lowest bit
 * says a count byte follows (counts of 1, most of them, take none). A posting takes one to three bytes instead of a
 * 32-bit word, and the list grows by half, not double.
 */
export class PackedPostings {
  private bytes = new Uint8Array(8);
  private used = 0;
  private last = -1;
  /** Postings held. */
  size = 0;

  /** Bytes reserved (the copy's accounting). */
  get capacity(): number {
    return this.bytes.length;
  }

  /** Appends `row` (above every row added before) with its count (1-255). */
  add(row: number, count: number): void {
    if (!(row > this.last)) throw new RangeError(`row ${row} is not after the last row posted, ${this.last}`);
    const counted = count > 1;
    let value = (row - this.last) * 2 + (counted ? 1 : 0);
    this.last = row;
    // At most five bytes of gap and one of count.
    if (this.used + 6 > this.bytes.length) {
      const grown = new Uint8Array(Math.max(this.used + 6, Math.ceil(this.bytes.length * 1.5)));
      grown.set(this.bytes.subarray(0, this.used));
      this.bytes = grown;
    }
    while (value >= 0x80) {
      this.bytes[this.used++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    this.bytes[this.used++] = value;
    if (counted) this.bytes[this.used++] = Math.min(count, 255);
    this.size++;
  }

  /** Calls `visit` with each posting's row and count, in row order, until it answers false. */
  each(visit: (row: number, count: number) => boolean | undefined): void {
    const bytes = this.bytes;
    let at = 0;
    let row = -1;
    while (at < this.used) {
      const first = bytes[at++]!;
      let value: number;
      if (first < 0x80) {
        value = first; // a gap under 64: the common case, one byte
      } else {
        value = first & 0x7f;
        let scale = 0x80;
        let byte: number;
        do {
          byte = bytes[at++]!;
          value += (byte & 0x7f) * scale;
          scale *= 0x80;
        } while (byte >= 0x80);
      }
      row += Math.floor(value / 2);
      const count = value % 2 === 1 ? bytes[at++]! : 1;
      if (visit(row, count) === false) return;
    }
  }
}
