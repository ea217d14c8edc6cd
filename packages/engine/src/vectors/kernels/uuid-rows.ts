/**
 * Row numbers by memory id for a bank of up to millions of memories: each id as its 16 bytes in one array (row-major)
 * and an open-addressing table of rows (linear probing, backward-shift deletion). A Map of id strings takes about a
 * hundred bytes a memory; this takes 16 bytes plus two to four table slots of 4 bytes.
 */
export class UuidRows {
  private bytes = new Uint8Array(16 * 64);
  /** Row + 1 per slot; 0 is an empty slot. */
  private slots = new Int32Array(128);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Bytes held. */
  get byteLength(): number {
    return this.bytes.byteLength + this.slots.byteLength;
  }

  /** The row of `id`, or undefined. */
  get(id: string): number | undefined {
    const mask = this.slots.length - 1;
    for (let slot = hashOf(id) & mask; ; slot = (slot + 1) & mask) {
      const held = this.slots[slot]!;
      if (held === 0) return undefined;
      if (this.holds(held - 1, id)) return held - 1;
    }
  }

  /** Records `id` at `row` (the id must not be recorded yet). */
  set(id: string, row: number): void {
    if ((this.count + 1) * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    if ((row + 1) * 16 > this.bytes.length) {
      let size = this.bytes.length;
      while (size < (row + 1) * 16) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    writeUuid(id, this.bytes, row * 16);
    this.place(row);
    this.count++;
  }

  /** Forgets `id`; answers its row, or undefined when it was not recorded. */
  delete(id: string): number | undefined {
    const mask = this.slots.length - 1;
    let slot = hashOf(id) & mask;
    for (; ; slot = (slot + 1) & mask) {
      const held = this.slots[slot]!;
      if (held === 0) return undefined;
      if (this.holds(held - 1, id)) break;
    }
    const row = this.slots[slot]! - 1;
    // Backward shift: later entries of the same probe run move up, so lookups never stop at a hole before them.
    let hole = slot;
    for (let next = (hole + 1) & mask; this.slots[next] !== 0; next = (next + 1) & mask) {
      const home = this.homeOf(this.slots[next]! - 1) & mask;
      const between = hole <= next ? home > hole && home <= next : home > hole || home <= next;
      if (between) continue;
      this.slots[hole] = this.slots[next]!;
      hole = next;
    }
    this.slots[hole] = 0;
    this.count--;
    return row;
  }

  /** The id stored at `row` (a row recorded with set). */
  idAt(row: number): string {
    return readUuid(this.bytes, row * 16);
  }

  /** The rows recorded, in no particular order. */
  *rows(): IterableIterator<number> {
    for (const held of this.slots) if (held !== 0) yield held - 1;
  }

  private place(row: number): void {
    const mask = this.slots.length - 1;
    let slot = this.homeOf(row) & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = row + 1;
  }

  private rehash(size: number): void {
    const old = this.slots;
    this.slots = new Int32Array(size);
    for (const held of old) if (held !== 0) this.place(held - 1);
  }

  /** The hash of the id stored at `row`: its last four bytes, random in every UUID version the engine stores. */
  private homeOf(row: number): number {
    const b = this.bytes;
    const o = row * 16 + 12;
    return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
  }

  private holds(row: number, id: string): boolean {
    const b = this.bytes;
    let o = row * 16;
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i);
      if (c === 45) continue; // '-'
      const high = hexValue(c);
      const low = hexValue(id.charCodeAt(++i));
      if (b[o++] !== ((high << 4) | low)) return false;
    }
    return true;
  }
}

/** The last eight hex digits of the id as a number: the same value homeOf reads from its bytes. */
function hashOf(id: string): number {
  return Number.parseInt(id.slice(-8), 16) >>> 0;
}

function hexValue(c: number): number {
  // '0'-'9' -> 0-9, 'a'-'f' / 'A'-'F' -> 10-15
  return c <= 57 ? c - 48 : (c | 32) - 87;
}

function writeUuid(id: string, into: Uint8Array, offset: number): void {
  if (id.length !== 36) throw new Error(`not a UUID: ${id}`);
  let o = offset;
  for (let i = 0; i < 36; i++) {
    const c = id.charCodeAt(i);
    if (c === 45) continue;
    into[o++] = (hexValue(c) << 4) | hexValue(id.charCodeAt(++i));
  }
}

const HEX = '0123456789abcdef';

function readUuid(bytes: Uint8Array, offset: number): string {
  let s = '';
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
    const b = bytes[offset + i]!;
    s += HEX[b >> 4]! + HEX[b & 15]!;
  }
  return s;
}
