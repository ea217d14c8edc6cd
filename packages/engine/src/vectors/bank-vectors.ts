/** What recall filters on, kept beside each vector so filtering needs no database round trip. */
export interface VectorRowMeta {
  id: string;
  bankId: string;
  space: string;
  type: string;
  valid: boolean;
  superseded: boolean;
  tags: string[];
}

/**
 * One bank's vectors in one contiguous Float32Array (row-major), with their metadata. Deletes swap the last row into
 * the hole so the scan stays dense.
 */
export class BankVectors {
  private data: Float32Array;
  private readonly meta: VectorRowMeta[] = [];
  private readonly position = new Map<string, number>();
  /** pg_snapshot_xmin of the last synchronisation: rows written by transactions from this one on are re-read. */
  syncedFrom = '0';
  lastUsed = Date.now();

  constructor(readonly dimension: number, capacity = 1024) {
    this.data = new Float32Array(dimension * capacity);
  }

  get size(): number {
    return this.meta.length;
  }

  upsert(meta: VectorRowMeta, vector: ArrayLike<number>): void {
    let index = this.position.get(meta.id);
    if (index === undefined) {
      index = this.meta.length;
      if ((index + 1) * this.dimension > this.data.length) {
        const grown = new Float32Array(this.data.length * 2);
        grown.set(this.data);
        this.data = grown;
      }
      this.meta.push(meta);
      this.position.set(meta.id, index);
    } else {
      this.meta[index] = meta;
    }
    this.data.set(vector, index * this.dimension);
  }

  remove(id: string): void {
    const index = this.position.get(id);
    if (index === undefined) return;
    const last = this.meta.length - 1;
    if (index !== last) {
      const moved = this.meta[last]!;
      this.meta[index] = moved;
      this.position.set(moved.id, index);
      this.data.copyWithin(index * this.dimension, last * this.dimension, (last + 1) * this.dimension);
    }
    this.meta.pop();
    this.position.delete(id);
  }

  /** Top `k` rows by dot product with `query` (cosine, vectors being unit length) among rows that pass `keep`. */
  search(query: Float32Array, k: number, keep: (m: VectorRowMeta) => boolean, into: TopK): void {
    const d = this.dimension;
    const data = this.data;
    for (let row = 0; row < this.meta.length; row++) {
      const meta = this.meta[row]!;
      if (!keep(meta)) continue;
      let dot = 0;
      const offset = row * d;
      for (let j = 0; j < d; j++) dot += query[j]! * data[offset + j]!;
      into.offer(meta.id, dot, k);
    }
  }
}

/** A bounded min-heap keeping the best `k` (id, score) pairs. */
export class TopK {
  private readonly ids: string[] = [];
  private readonly scores: number[] = [];

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
