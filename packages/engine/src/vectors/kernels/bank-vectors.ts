import type { KeywordDoc, VectorRowMeta } from '../storage/indexed-row.js';
import { Int16Matrix } from './int16-matrix.js';
import { RowMarks } from './row-marks.js';
import { postingRow, TermIndex } from './term-index.js';

/** A row's view of the term index (a class, not closures: recall makes one per pooled candidate). */
class RowKeywords implements KeywordDoc {
  constructor(
    private readonly index: TermIndex,
    private readonly row: number,
    readonly length: number,
  ) {}

  get(term: string): number {
    return this.index.countIn(this.row, this.index.numberOf(term));
  }

  terms(): ReadonlyMap<string, number> {
    return this.index.termsOf(this.row);
  }
}

/**
 * One bank's vectors, row-major and contiguous, with their metadata and keyword index: int16-quantized in WebAssembly
 * memory for SIMD scoring when available (int16-matrix.ts), else in a Float32Array scanned in JS. Row numbers are
 * stable (the term index refers to them): a removed row is a hole the scan skips until a new memory reuses it.
 */
export class BankVectors {
  /** The rows as floats, only when SIMD is unavailable. */
  private data: Float32Array;
  private readonly simd: Int16Matrix | undefined;
  /** By row; undefined for a free row. */
  private readonly meta: Array<VectorRowMeta | undefined> = [];
  private readonly position = new Map<string, number>();
  private readonly free: number[] = [];
  private readonly keywords = new TermIndex();
  /** batch id -> seq -> id, for neighbour expansion. */
  private readonly batches = new Map<string, Map<number, string>>();
  /** The last SIMD scan: its query (compared by identity) and every row's score; dropped on any change of rows. */
  private lastScan: { query: Float32Array; scores: Float32Array } | undefined;
  private scanBuffer = new Float32Array(0);
  /** Rows seen by the current keyword match, to take each row once. */
  private readonly seen = new RowMarks();
  /** The bank's change number this copy reflects (-1: nothing read yet); newer changes are read next time. */
  changeSeq = -1;
  /** The bank's change log this copy follows; undefined while the bank does not exist. */
  changeLogId: string | undefined;
  /** Bytes of the rows' texts and term lists (see `bytes`). */
  private contentBytes = 0;
  /** The database handle's writeVersion when this copy was last synchronised (see Database.writeVersion). */
  syncedAtVersion: number | undefined;
  lastUsed = Date.now();

  constructor(
    readonly dimension: number,
    capacity = 1024,
  ) {
    this.simd = Int16Matrix.create(dimension, capacity);
    this.data = new Float32Array(this.simd ? 0 : dimension * capacity);
  }

  get size(): number {
    return this.position.size;
  }

  /**
   * About how much memory the copy takes: its vector storage, a fixed share per row (metadata, the memory's fields,
   * map entries) and the rows' texts and terms. An estimate the cache bounds itself by, not an exact count.
   */
  get bytes(): number {
    const vectors = this.simd ? this.simd.rowCapacity * this.dimension * 2 : this.data.length * 4;
    return vectors + this.meta.length * ROW_OVERHEAD_BYTES + this.contentBytes;
  }

  /** Adds or replaces a memory: its metadata, its keyword-index terms with their counts, and its vector. */
  upsert(meta: VectorRowMeta, terms: ReadonlyMap<string, number>, vector: ArrayLike<number>): void {
    this.lastScan = undefined;
    let index = this.position.get(meta.id);
    if (index !== undefined) {
      this.contentBytes -= contentBytes(this.meta[index]!, this.keywords.termCount(index));
      this.unlink(index, this.meta[index]!);
    } else {
      index = this.free.pop() ?? this.meta.length;
      if (this.simd) {
        if (index + 1 > this.simd.rowCapacity) this.simd.reserve(this.simd.rowCapacity * 2);
      } else if ((index + 1) * this.dimension > this.data.length) {
        const grown = new Float32Array(this.data.length * 2);
        grown.set(this.data);
        this.data = grown;
      }
      this.position.set(meta.id, index);
    }
    this.meta[index] = meta;
    this.contentBytes += contentBytes(meta, terms.size);
    this.link(index, meta, terms);
    if (this.simd) this.simd.set(index, vector);
    else this.data.set(vector, index * this.dimension);
  }

  remove(id: string): void {
    const index = this.position.get(id);
    if (index === undefined) return;
    this.lastScan = undefined;
    this.contentBytes -= contentBytes(this.meta[index]!, this.keywords.termCount(index));
    this.unlink(index, this.meta[index]!);
    this.meta[index] = undefined;
    this.position.delete(id);
    this.free.push(index);
  }

  /** The ids of every memory in the copy. */
  ids(): IterableIterator<string> {
    return this.position.keys();
  }

  get(id: string): VectorRowMeta | undefined {
    const index = this.position.get(id);
    return index === undefined ? undefined : this.meta[index];
  }

  /** Cosine of a row with the query (vectors are unit length). */
  cosine(id: string, query: Float32Array): number {
    const index = this.position.get(id);
    if (index === undefined) return 0;
    // Recall asks for the cosines of its pool right after scanning with the same query: read them from that scan.
    if (this.lastScan?.query === query) return this.lastScan.scores[index]!;
    if (this.simd) return this.simd.dot(index, query);
    return dot(query, this.data, index * this.dimension, this.dimension);
  }

  /** Writes a row's vector (the dequantized one when held as int16) into `out`; false when the bank does not hold it. */
  vectorInto(id: string, out: Float32Array): boolean {
    const index = this.position.get(id);
    if (index === undefined) return false;
    if (this.simd) this.simd.rowInto(index, out);
    else out.set(this.data.subarray(index * this.dimension, (index + 1) * this.dimension));
    return true;
  }

  /** How many rows hold `term`. */
  documentFrequency(term: string): number {
    return this.keywords.documentFrequency(term);
  }

  /** The memory's keyword-index terms (undefined when the bank does not hold it). */
  keywordDoc(id: string): KeywordDoc | undefined {
    const row = this.position.get(id);
    const meta = row === undefined ? undefined : this.meta[row];
    if (row === undefined || !meta) return undefined;
    return new RowKeywords(this.keywords, row, meta.length);
  }

  /**
   * The rows holding any of `select` that pass `keep`, each once (term by term, in posting order), with their counts
   * of each of `score` (row-major: counts[i * score.length + j] is row i's count of score[j]).
   */
  matching(
    select: readonly string[],
    score: readonly string[],
    keep: (m: VectorRowMeta) => boolean,
  ): { rows: VectorRowMeta[]; counts: Uint8Array } {
    const epoch = this.seen.begin(this.meta.length);
    const { marks, picks } = this.seen;
    const rows: VectorRowMeta[] = [];
    const keywords = this.keywords;
    // Rows holding a selecting term, each once; picks[row] is its place in `rows` (-1: filtered out). Plain loops over
    // the posting words: a common term has thousands.
    for (const t of select) {
      const id = keywords.numberOf(t);
      const p = keywords.postingsOf(id);
      if (id === undefined || !p) continue;
      for (let k = 0; k < p.size; k++) {
        const w = p.words[k]!;
        const row = postingRow(w);
        if (marks[row] === epoch || keywords.postingCount(w, id) === 0) continue;
        marks[row] = epoch;
        const m = this.meta[row];
        picks[row] = m && keep(m) ? rows.push(m) - 1 : -1;
      }
    }
    // Their counts of each scoring term, term by term over the postings.
    const counts = new Uint8Array(rows.length * score.length);
    for (let j = 0; j < score.length; j++) {
      const id = keywords.numberOf(score[j]!);
      const p = keywords.postingsOf(id);
      if (id === undefined || !p) continue;
      for (let k = 0; k < p.size; k++) {
        const w = p.words[k]!;
        const row = postingRow(w);
        if (marks[row] !== epoch) continue;
        const i = picks[row]!;
        if (i >= 0) counts[i * score.length + j] = keywords.postingCount(w, id);
      }
    }
    return { rows, counts };
  }

  /** The ids at seq - 1 and seq + 1 of the same retain call. */
  neighbours(id: string): string[] {
    const meta = this.get(id);
    if (!meta || meta.batchId === null) return [];
    const batch = this.batches.get(meta.batchId);
    return [batch?.get(meta.seq - 1), batch?.get(meta.seq + 1)].filter((x): x is string => x !== undefined);
  }

  private link(row: number, meta: VectorRowMeta, terms: ReadonlyMap<string, number>): void {
    this.keywords.add(row, terms);
    if (meta.batchId !== null) {
      let batch = this.batches.get(meta.batchId);
      if (!batch) this.batches.set(meta.batchId, (batch = new Map<number, string>()));
      batch.set(meta.seq, meta.id);
    }
  }

  private unlink(row: number, meta: VectorRowMeta): void {
    this.keywords.remove(row);
    if (meta.batchId !== null) {
      const batch = this.batches.get(meta.batchId);
      if (batch?.get(meta.seq) === meta.id) batch.delete(meta.seq);
      if (batch?.size === 0) this.batches.delete(meta.batchId);
    }
  }

  /** Top `k` rows by dot product with `query` (cosine, vectors being unit length) among rows that pass `keep`. */
  search(query: Float32Array, k: number, keep: (m: VectorRowMeta) => boolean, into: TopK): void {
    const d = this.dimension;
    const data = this.data;
    const rows = this.meta.length;
    let simdScores: Float32Array | undefined;
    if (this.simd) {
      // A second scan with the same query (the temporal arm after the semantic one) reuses the first.
      if (this.lastScan?.query !== query) {
        // Copied out of the matrix's memory (the next scan overwrites it) into a buffer kept for the next recall.
        if (this.scanBuffer.length < rows) this.scanBuffer = new Float32Array(Math.max(1024, rows * 2));
        const scores = this.scanBuffer.subarray(0, rows);
        scores.set(this.simd.scores(query, rows));
        this.lastScan = { query, scores };
      }
      simdScores = this.lastScan.scores;
    }
    for (let row = 0; row < rows; row++) {
      const score = simdScores ? simdScores[row]! : dot(query, data, row * d, d);
      // Most rows score below the k-th best so far: they are skipped before the (slower) filter looks at them.
      if (!into.wouldTake(score, k)) continue;
      const meta = this.meta[row];
      if (meta && keep(meta)) into.offer(meta.id, score, k);
    }
  }
}

/** Memory a row takes besides its vector, text and terms: its metadata and memory objects, ids, map entries. */
const ROW_OVERHEAD_BYTES = 1024;

/** A row's texts (two bytes a character) and its term list (a posting and an arena word per term, and slack). */
function contentBytes(meta: VectorRowMeta, terms: number): number {
  return 2 * (meta.memory.text.length + (meta.memory.context?.length ?? 0)) + 16 * terms;
}

/** Dot product of `q` with `data[offset .. offset + d)`; four accumulators let V8 pipeline the multiply-adds (2x). */
function dot(q: Float32Array, data: Float32Array, offset: number, d: number): number {
  let a0 = 0;
  let a1 = 0;
  let a2 = 0;
  let a3 = 0;
  let j = 0;
  for (; j + 3 < d; j += 4) {
    a0 += q[j]! * data[offset + j]!;
    a1 += q[j + 1]! * data[offset + j + 1]!;
    a2 += q[j + 2]! * data[offset + j + 2]!;
    a3 += q[j + 3]! * data[offset + j + 3]!;
  }
  for (; j < d; j++) a0 += q[j]! * data[offset + j]!;
  return a0 + a1 + a2 + a3;
}

/** A bounded min-heap keeping the best `k` (id, score) pairs. */
export class TopK {
  private readonly ids: string[] = [];
  private readonly scores: number[] = [];

  /** Whether `offer` would keep this score now. */
  wouldTake(score: number, k: number): boolean {
    return this.ids.length < k || score > this.scores[0]!;
  }

  offer(id: string, score: number, k: number): void {
    if (this.ids.length < k) {
      this.ids.push(id);
      this.scores.push(score);
      this.up(this.ids.length - 1);
    } else if (score > this.scores[0]!) {
      this.ids[0] = id;
      this.scores[0] = score;
      this.down(0);
    }
  }

  /** Best first. */
  results(): Array<{ id: string; score: number }> {
    return this.ids.map((id, i) => ({ id, score: this.scores[i]! })).sort((a, b) => b.score - a.score);
  }

  private swap(a: number, b: number): void {
    [this.ids[a], this.ids[b]] = [this.ids[b]!, this.ids[a]!];
    [this.scores[a], this.scores[b]] = [this.scores[b]!, this.scores[a]!];
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.scores[parent]! <= this.scores[i]!) return;
      this.swap(parent, i);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.scores.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let smallest = i;
      if (l < n && this.scores[l]! < this.scores[smallest]!) smallest = l;
      if (r < n && this.scores[r]! < this.scores[smallest]!) smallest = r;
      if (smallest === i) return;
      this.swap(smallest, i);
      i = smallest;
    }
  }
}
