/**
 * A bank's keyword index in typed arrays: per term, the rows holding it (postings) and how many do (exact document
 * frequency); per row, its terms with their counts. The first version kept a Set of memory ids per term and a Map of
 * terms per memory: about 3 KB of heap per memory, most of the engine's memory at 100,000 memories. Here a term is a
 * number (a dictionary maps strings to it), a posting is one 32-bit (row << 8 | count) word, and a row's terms are a
 * range of one shared arena of (term << 8 | count) words (counts above 255 are kept as 255: BM25 saturates long before).
 *
 * Rows are the bank's stable row numbers (bank-vectors.ts), reused after a removal. Removal is lazy: the row's arena
 * range is dropped, its postings stay until a rebuild, and a posting counts only while its row still holds the term
 * (so a reused row never inherits its predecessor's terms). Postings are rebuilt from the arena once stale ones
 * outnumber live ones, which keeps removals O(terms of the row) instead of a scan of every posting list.
 */

/** A posting or arena word is (number << COUNT_BITS | count). */
const COUNT_BITS = 8;
const COUNT_MAX = (1 << COUNT_BITS) - 1;

/** The row of a posting word. */
export function postingRow(word: number): number {
  return word >>> COUNT_BITS;
}

/** A term's postings: (row << 8 | count) words in insertion order. */
export class Postings {
  words = new Uint32Array(4);
  size = 0;

  add(row: number, count: number): void {
    if (this.size === this.words.length) {
      const grown = new Uint32Array(this.words.length * 2);
      grown.set(this.words);
      this.words = grown;
    }
    this.words[this.size++] = ((row << COUNT_BITS) | count) >>> 0;
  }
}

export class TermIndex {
  private readonly ids = new Map<string, number>();
  private readonly names: string[] = [];
  private postings: Array<Postings | undefined> = [];
  private df = new Int32Array(256);
  private arena = new Uint32Array(1024);
  private arenaUsed = 0;
  private start = new Uint32Array(256);
  private count = new Uint16Array(256);
  private livePostings = 0;
  private stalePostings = 0;

  /** Number of rows holding `term`. */
  documentFrequency(term: string): number {
    const id = this.ids.get(term);
    return id === undefined ? 0 : this.df[id]!;
  }

  /** Indexes `row` with its terms (a row's previous terms must have been removed first). */
  add(row: number, terms: ReadonlyMap<string, number>): void {
    this.ensureRows(row + 1);
    const n = Math.min(terms.size, 0xffff);
    if (this.arenaUsed + n > this.arena.length) this.compactArena(n);
    this.start[row] = this.arenaUsed;
    this.count[row] = n;
    let i = 0;
    for (const [term, c] of terms) {
      if (i++ === n) break;
      const id = this.intern(term);
      const count = Math.min(Math.max(c, 1), COUNT_MAX);
      (this.postings[id] ??= new Postings()).add(row, count);
      this.df[id]!++;
      this.arena[this.arenaUsed++] = ((id << COUNT_BITS) | count) >>> 0;
    }
    this.livePostings += n;
  }

  /** How many distinct terms `row` holds. */
  termCount(row: number): number {
    return row < this.count.length ? this.count[row]! : 0;
  }

  /** Forgets `row`'s terms. */
  remove(row: number): void {
    if (row >= this.count.length) return;
    const s = this.start[row]!;
    const n = this.count[row]!;
    for (let i = s; i < s + n; i++) this.df[this.arena[i]! >>> COUNT_BITS]!--;
    this.count[row] = 0;
    this.livePostings -= n;
    this.stalePostings += n;
    if (this.stalePostings > this.livePostings + 1024) this.rebuildPostings();
  }

  /** The number of a term (undefined when no row ever held it). */
  numberOf(term: string): number | undefined {
    return this.ids.get(term);
  }

  /**
   * The term's postings as they are stored, `words[0 .. size)`, for loops too hot for a callback: read each with
   * postingRow and postingCount.
   */
  postingsOf(termId: number | undefined): { words: Uint32Array; size: number } | undefined {
    return termId === undefined ? undefined : this.postings[termId];
  }

  /**
   * The count of a posting of `termId`, 0 when the posting is stale (its row was removed or reused since). While no
   * removal has happened since the last rebuild every posting is live and carries its own count.
   */
  postingCount(word: number, termId: number): number {
    return this.stalePostings === 0 ? word & COUNT_MAX : this.countIn(word >>> COUNT_BITS, termId);
  }

  /** How often the row holds the term (0 when it does not). */
  countIn(row: number, termId: number | undefined): number {
    if (termId === undefined || row >= this.count.length) return 0;
    const s = this.start[row]!;
    const end = s + this.count[row]!;
    const arena = this.arena;
    for (let i = s; i < end; i++) {
      const w = arena[i]!;
      if (w >>> COUNT_BITS === termId) return w & COUNT_MAX;
    }
    return 0;
  }

  /** The row's terms with their counts. */
  termsOf(row: number): Map<string, number> {
    const out = new Map<string, number>();
    if (row >= this.count.length) return out;
    const s = this.start[row]!;
    for (let i = s; i < s + this.count[row]!; i++) {
      const w = this.arena[i]!;
      out.set(this.names[w >>> COUNT_BITS]!, w & COUNT_MAX);
    }
    return out;
  }

  /** The number of a term, given a new one the first time. */
  private intern(term: string): number {
    let id = this.ids.get(term);
    if (id === undefined) {
      id = this.names.length;
      this.ids.set(term, id);
      this.names.push(term);
      if (id >= this.df.length) {
        const df = new Int32Array(this.df.length * 2);
        df.set(this.df);
        this.df = df;
      }
    }
    return id;
  }

  private ensureRows(rows: number): void {
    if (rows <= this.start.length) return;
    let size = this.start.length;
    while (size < rows) size *= 2;
    const start = new Uint32Array(size);
    start.set(this.start);
    const count = new Uint16Array(size);
    count.set(this.count);
    this.start = start;
    this.count = count;
  }

  /** Makes room for `n` more arena words: copies the live ranges, in row order, into an arena of the right size. */
  private compactArena(n: number): void {
    let live = 0;
    for (let row = 0; row < this.count.length; row++) live += this.count[row]!;
    let size = 1024;
    while (size < (live + n) * 1.5) size *= 2;
    const next = new Uint32Array(size);
    let used = 0;
    for (let row = 0; row < this.count.length; row++) {
      const c = this.count[row]!;
      if (c === 0) continue;
      next.set(this.arena.subarray(this.start[row], this.start[row]! + c), used);
      this.start[row] = used;
      used += c;
    }
    this.arena = next;
    this.arenaUsed = used;
  }

  /** Posting lists again from the live rows (drops stale postings), in row order. */
  private rebuildPostings(): void {
    const postings: Array<Postings | undefined> = [];
    for (let row = 0; row < this.count.length; row++) {
      const s = this.start[row]!;
      for (let i = s; i < s + this.count[row]!; i++) {
        const w = this.arena[i]!;
        (postings[w >>> COUNT_BITS] ??= new Postings()).add(row, w & COUNT_MAX);
      }
    }
    this.postings = postings;
    this.stalePostings = 0;
  }
}
