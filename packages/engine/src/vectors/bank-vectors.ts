import type { Memory } from '../memory/types.js';
import { Int16Matrix } from './int16-matrix.js';

/** What recall filters on, kept beside each vector so filtering needs no database round trip. */
export interface VectorRowMeta {
  id: string;
  bankId: string;
  space: string;
  type: string;
  valid: boolean;
  superseded: boolean;
  tags: string[];
  /** The retain call that stored it, and its position there: neighbours are seq - 1 and seq + 1 in one batch. */
  batchId: string | null;
  seq: number;
  documentId: string | null;
  /** occurred_at in epoch milliseconds, or null when the memory has no date. */
  occurredAt: number | null;
  /** Keyword-index terms (lexemes, or blind tokens under encryption) with their counts, and the total count. */
  terms: ReadonlyMap<string, number>;
  length: number;
  /** The memory's text in cl100k tokens (for max_tokens budgets). */
  tokenCount: number;
  /** The memory as the API shows it (bodies already opened), so recall needs no database read to answer. */
  memory: Memory;
}

/**
 * One bank's vectors, row-major and contiguous, with their metadata: int16-quantized in WebAssembly memory for SIMD
 * scoring when available (int16-matrix.ts), else in a Float32Array scanned in JS. Deletes swap the last row into the
 * hole so the scan stays dense.
 */
export class BankVectors {
  /** The rows as floats, only when SIMD is unavailable. */
  private data: Float32Array;
  private readonly simd: Int16Matrix | undefined;
  private readonly meta: VectorRowMeta[] = [];
  private readonly position = new Map<string, number>();
  /** Term -> ids of the rows holding it (document frequency is its size). */
  private readonly postings = new Map<string, Set<string>>();
  /** batch id -> seq -> id, for neighbour expansion. */
  private readonly batches = new Map<string, Map<number, string>>();
  private totalLength = 0;
  /** pg_snapshot_xmin of the last synchronisation: rows written by transactions from this one on are re-read. */
  syncedFrom = '0';
  /** The database handle's writeVersion when this copy was last synchronised (see Database.writeVersion). */
  syncedAtVersion: number | undefined;
  lastUsed = Date.now();

  constructor(readonly dimension: number, capacity = 1024) {
    this.simd = Int16Matrix.create(dimension, capacity);
    this.data = new Float32Array(this.simd ? 0 : dimension * capacity);
  }

  get size(): number {
    return this.meta.length;
  }

  upsert(meta: VectorRowMeta, vector: ArrayLike<number>): void {
    const previous = this.get(meta.id);
    if (previous) this.unlink(previous);
    this.link(meta);
    let index = this.position.get(meta.id);
    if (index === undefined) {
      index = this.meta.length;
      if (this.simd) {
        if (index + 1 > this.simd.rowCapacity) this.simd.reserve(this.simd.rowCapacity * 2);
      } else if ((index + 1) * this.dimension > this.data.length) {
        const grown = new Float32Array(this.data.length * 2);
        grown.set(this.data);
        this.data = grown;
      }
      this.meta.push(meta);
      this.position.set(meta.id, index);
    } else {
      this.meta[index] = meta;
    }
    if (this.simd) this.simd.set(index, vector);
    else this.data.set(vector, index * this.dimension);
  }

  remove(id: string): void {
    const index = this.position.get(id);
    if (index === undefined) return;
    this.unlink(this.meta[index]!);
    const last = this.meta.length - 1;
    if (index !== last) {
      const moved = this.meta[last]!;
      this.meta[index] = moved;
      this.position.set(moved.id, index);
      if (this.simd) this.simd.move(last, index);
      else this.data.copyWithin(index * this.dimension, last * this.dimension, (last + 1) * this.dimension);
    }
    this.meta.pop();
    this.position.delete(id);
  }

  get(id: string): VectorRowMeta | undefined {
    const index = this.position.get(id);
    return index === undefined ? undefined : this.meta[index];
  }

  /** Cosine of a row with the query (vectors are unit length). */
  cosine(id: string, query: Float32Array): number {
    const index = this.position.get(id);
    if (index === undefined) return 0;
    if (this.simd) return this.simd.dot(index, query);
    return dot(query, this.data, index * this.dimension, this.dimension);
  }

  /** How many rows hold `term`. */
  documentFrequency(term: string): number {
    return this.postings.get(term)?.size ?? 0;
  }

  get averageLength(): number {
    return this.meta.length === 0 ? 0 : this.totalLength / this.meta.length;
  }

  /** Ids of the rows holding any of `terms`. */
  matching(terms: readonly string[]): Set<string> {
    const out = new Set<string>();
    for (const t of terms) for (const id of this.postings.get(t) ?? []) out.add(id);
    return out;
  }

  /** The ids at seq - 1 and seq + 1 of the same retain call. */
  neighbours(id: string): string[] {
    const meta = this.get(id);
    if (!meta || meta.batchId === null) return [];
    const batch = this.batches.get(meta.batchId);
    return [batch?.get(meta.seq - 1), batch?.get(meta.seq + 1)].filter((x): x is string => x !== undefined);
  }

  /** Every row (read-only view), e.g. for a time-window scan. */
  rows(): readonly VectorRowMeta[] {
    return this.meta;
  }

  private link(meta: VectorRowMeta): void {
    for (const term of meta.terms.keys()) {
      let ids = this.postings.get(term);
      if (!ids) this.postings.set(term, (ids = new Set()));
      ids.add(meta.id);
    }
    if (meta.batchId !== null) {
      let batch = this.batches.get(meta.batchId);
      if (!batch) this.batches.set(meta.batchId, (batch = new Map()));
      batch.set(meta.seq, meta.id);
    }
    this.totalLength += meta.length;
  }

  private unlink(meta: VectorRowMeta): void {
    for (const term of meta.terms.keys()) {
      const ids = this.postings.get(term);
      ids?.delete(meta.id);
      if (ids?.size === 0) this.postings.delete(term);
    }
    if (meta.batchId !== null) {
      const batch = this.batches.get(meta.batchId);
      if (batch?.get(meta.seq) === meta.id) batch.delete(meta.seq);
      if (batch?.size === 0) this.batches.delete(meta.batchId);
    }
    this.totalLength -= meta.length;
  }

  /** Top `k` rows by dot product with `query` (cosine, vectors being unit length) among rows that pass `keep`. */
  search(query: Float32Array, k: number, keep: (m: VectorRowMeta) => boolean, into: TopK): void {
    const d = this.dimension;
    const data = this.data;
    const rows = this.meta.length;
    const simdScores = this.simd?.scores(query, rows);
    for (let row = 0; row < rows; row++) {
      const score = simdScores ? simdScores[row]! : dot(query, data, row * d, d);
      // Most rows score below the k-th best so far: they are skipped before the (slower) filter looks at them.
      if (!into.wouldTake(score, k)) continue;
      const meta = this.meta[row]!;
      if (keep(meta)) into.offer(meta.id, score, k);
    }
  }
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
