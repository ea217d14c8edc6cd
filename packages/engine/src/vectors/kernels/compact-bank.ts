import { tagsPass } from '../../filters/tags-match.js';
import { validityTest } from '../../filters/validity.js';
import { BinaryCodes, nearestRows } from './binary-codes.js';
import type { CompactRow } from '../storage/indexed-row.js';
import type { RowFilter, TimeWindow } from '../storage/postgres-index.js';
import { ResidualBits, type ResidualLevels } from './residual-bits.js';
import { RowMarks } from './row-marks.js';
import { PackedPostings } from './packed-postings.js';
import { UuidRows } from './uuid-rows.js';

/** The rows holding selecting terms, as `matching` answers them: row numbers, lengths and scoring-term counts. */
export interface CompactMatches {
  rows: Int32Array;
  lengths: Uint16Array;
  /** counts[i * scoreTerms + j]: row i's count of the j-th scoring term. */
  counts: Uint8Array;
}

/** A table address as Postgres writes a ctid: '(block,offset)'. */
const TABLE_ADDRESS = /^\((\d+),(\d+)\)$/;
/** The block of a row whose address the copy does not have (a block number Postgres never reaches). */
const NO_BLOCK = 0xffffffff;
const LIVE = 1;
const VALID = 2;
const NO_TAGS: readonly string[] = [];

/** Numbers for the few distinct strings of a column (spaces, types). */
class Dictionary {
  private readonly numbers = new Map<string, number>();

  numberOf(name: string): number | undefined {
    return this.numbers.get(name);
  }

  intern(name: string): number {
    let n = this.numbers.get(name);
    if (n === undefined) this.numbers.set(name, (n = this.numbers.size));
    return n;
  }
}

/** Bytes a term's postings take besides their bytes: the list's objects. */
const TERM_LIST_BYTES = 120;
/** Bytes a row takes besides its code, id and terms: its columns (its address among them), and the id table's share. */
const ROW_BYTES = 21 + 8;

/**
 * A bank's compact copy, for banks whose full copy (bank-vectors.ts) the cache cannot hold: about 200 bytes a memory
 * instead of 2-3 KB. It keeps each memory's vector as a two-bit code (a sign bit and a magnitude bit a dimension), its
 * filter columns and length as numbers, its id as 16 bytes and its terms as postings only; no bodies and no float
 * vectors. Recall finds the nearest sign codes here and narrows them by their two-bit codes; the database ranks those
 * by their stored vectors and sends the rows recall pools (recall/compact-arms.ts).
 *
 * Rows are never reused: a removed or edited memory's row is dead (the scan and the postings skip it) and an edit
 * takes a new row, so a posting never needs its row's terms to tell whether it still counts, and the copy keeps no
 * list of each row's terms (half the memory of the full copy's term index). Once dead rows outnumber a quarter of the
 * live ones the copy is `wasteful`, and the cache reads it again instead of bringing it up to date.
 */
export class CompactBank {
  /** The bank's change number this copy reflects (-1: nothing read yet). */
  changeSeq = -1;
  /** The bank's change log this copy follows; undefined while the bank does not exist. */
  changeLogId: string | undefined;
  /** The database handle's writeVersion when this copy was last synchronised (see Database.writeVersion). */
  syncedAtVersion: number | undefined;
  lastUsed = Date.now();

  private readonly codes: BinaryCodes;
  /** The magnitude bits; absent when the copy was made without levels (its bank had no vectors yet). */
  private readonly residuals: ResidualBits | undefined;
  private readonly idRows = new UuidRows();
  private readonly termNumbers = new Map<string, number>();
  private readonly postings: PackedPostings[] = [];
  /** Bytes the postings reserve. */
  private postingBytes = 0;
  private dead = 0;
  /** Rows used, live or dead: the scan covers [0, end). */
  private end = 0;
  private capacity = 0;
  private flags = new Uint8Array(0);
  private spaces = new Uint16Array(0);
  private types = new Uint16Array(0);
  private lengths = new Uint16Array(0);
  /** occurred_at in epoch milliseconds; NaN when the memory has none (NaN fails every window test). */
  private occurred = new Float64Array(0);
  /** Each row's address in the table (CompactRow.address): its block, NO_BLOCK when unknown, and its offset. */
  private blocks = new Uint32Array(0);
  private offsets = new Uint16Array(0);
  /** Tags of the rows that have any; equal tag lists share one array. */
  private readonly tags = new Map<number, readonly string[]>();
  private readonly tagLists = new Map<string, readonly string[]>();
  /**
   * Validity intervals and expiry of the rows whose interval is not [their date, open) or that expire: most memories
   * are valid from their date for good, so only the others take room.
   */
  private readonly validity = new Map<number, { from: number; to: number | null; expires: number | null }>();
  private readonly spaceNames = new Dictionary();
  private readonly typeNames = new Dictionary();
  /** The last scan: its query (by identity) and every row's distance; dropped on any change of rows. */
  private lastScan: { query: Float32Array; distances: Uint16Array } | undefined;
  /** Rows seen by the current keyword match (to take each row once), or dated inside a wide window. */
  private readonly seen = new RowMarks();

  constructor(
    readonly dimension: number,
    /**
     * How the two-bit codes read a vector, learnt from the bank's first vectors. Their center is the point the sign
     * bits are taken around: one bit then splits the bank's own vectors about evenly, which ranks better than signs
     * around zero. Without levels, the sign bits are taken around zero and `refine` keeps the Hamming order.
     */
    levels?: ResidualLevels,
    capacity = 64,
  ) {
    this.codes = BinaryCodes.create(dimension, capacity, levels?.center);
    this.residuals = levels && new ResidualBits(levels, capacity);
    this.grow(capacity);
  }

  get size(): number {
    return this.idRows.size;
  }

  /** About how much memory the copy takes (the cache bounds itself by it). */
  get bytes(): number {
    const residuals = this.residuals?.bytes ?? 0;
    const terms = this.postingBytes + this.postings.length * TERM_LIST_BYTES;
    return this.codes.bytes + residuals + this.idRows.byteLength + this.capacity * ROW_BYTES + terms;
  }

  /** Whether so many rows are dead that reading the bank again beats keeping this copy. */
  get wasteful(): boolean {
    return this.dead > Math.max(1024, this.size / 4);
  }

  /** Adds or replaces a memory (a replaced memory's row dies and it takes a new one). */
  upsert(row: CompactRow, terms: ReadonlyMap<string, number>, vector: ArrayLike<number>): void {
    this.remove(row.id);
    this.lastScan = undefined;
    const index = this.end++;
    if (index >= this.capacity) this.grow(this.capacity * 2);
    this.idRows.set(row.id, index);
    this.flags[index] = LIVE | (row.valid ? VALID : 0);
    this.spaces[index] = this.spaceNames.intern(row.space);
    this.types[index] = this.typeNames.intern(row.type);
    this.lengths[index] = Math.min(row.length, 0xffff);
    this.occurred[index] = row.occurredAt ?? Number.NaN;
    const address = row.address === undefined ? undefined : TABLE_ADDRESS.exec(row.address);
    this.blocks[index] = address ? Number(address[1]) : NO_BLOCK;
    this.offsets[index] = address ? Number(address[2]) : 0;
    if (row.tags.length > 0) this.tags.set(index, this.sharedTags(row.tags));
    else this.tags.delete(index);
    if (row.validTo !== null || row.validFrom !== row.occurredAt || row.expiresAt !== null) {
      this.validity.set(index, { from: row.validFrom, to: row.validTo, expires: row.expiresAt });
    } else this.validity.delete(index);
    for (const [term, count] of terms) {
      let n = this.termNumbers.get(term);
      if (n === undefined) {
        this.termNumbers.set(term, (n = this.postings.length));
        this.postings.push(new PackedPostings());
      }
      const p = this.postings[n]!;
      this.postingBytes -= p.capacity;
      p.add(index, Math.min(Math.max(count, 1), 255));
      this.postingBytes += p.capacity;
    }
    this.codes.set(index, vector);
    this.residuals?.set(index, vector);
  }

  remove(id: string): void {
    const index = this.idRows.delete(id);
    if (index === undefined) return;
    this.lastScan = undefined;
    this.flags[index] = 0;
    this.tags.delete(index);
    this.validity.delete(index);
    this.dead++;
  }

  /** The ids of every memory in the copy. */
  *ids(): IterableIterator<string> {
    for (const row of this.idRows.rows()) yield this.idRows.idAt(row);
  }

  /** The memory at `row` (a row `nearest` or `matching` answered). */
  idAt(row: number): string {
    return this.idRows.idAt(row);
  }

  /** The row's address in the table as it was read ('(block,offset)'), when the copy has it. */
  addressAt(row: number): string | undefined {
    return this.blocks[row] === NO_BLOCK ? undefined : `(${this.blocks[row]},${this.offsets[row]})`;
  }

  /** The rows of these memories, as a mask by row number (ids the copy does not hold are left out). */
  rowMask(ids: Iterable<string>): Uint8Array {
    const mask = new Uint8Array(this.end);
    for (const id of ids) {
      const row = this.idRows.get(id);
      if (row !== undefined && row < mask.length) mask[row] = 1;
    }
    return mask;
  }

  /**
   * Which rows a recall keeps: live, valid, in the space, of the types, with the tags (`nearestIn` adds a window), and
   * among `passing` when the request has a filter expression (the copy does not hold every field one reads: the
   * database selects the passing rows, rowMask).
   */
  keeps(filter: RowFilter, passing?: Uint8Array): (row: number) => boolean {
    const space = this.spaceNames.numberOf(filter.space);
    if (space === undefined) return () => false;
    const types = filter.types?.length
      ? new Set(filter.types.flatMap((t) => this.typeNames.numberOf(t) ?? []))
      : undefined;
    const { tags, tagsMatch } = filter;
    const validNow = validityTest(filter.validity);
    const validOf = (row: number) => {
      const interval = this.validity.get(row);
      return interval
        ? validNow(interval.from, interval.to, interval.expires)
        : validNow(this.occurred[row]!, null, null);
    };
    return (row) =>
      this.flags[row] === (LIVE | VALID) &&
      this.spaces[row] === space &&
      validOf(row) &&
      (types === undefined || types.has(this.types[row]!)) &&
      (tags === undefined || tagsPass(tags, this.tags.get(row) ?? NO_TAGS, tagsMatch)) &&
      (passing === undefined || passing[row] === 1);
  }

  /** The `want` rows whose codes are nearest the query's among those `keep` passes, nearest first. */
  nearest(query: Float32Array, want: number, keep: (row: number) => boolean): Int32Array {
    return nearestRows(this.distances(query), this.end, want, keep);
  }

  /**
   * `nearest` among the memories dated inside `window`: the dates are scanned first (a window usually holds few of a
   * bank's memories), and only those rows are asked `keep` and ordered by distance (ties by row).
   */
  nearestIn(window: TimeWindow, query: Float32Array, want: number, keep: (row: number) => boolean): Int32Array {
    const distances = this.distances(query);
    const { from, to } = window;
    const dated: number[] = [];
    for (let row = 0; row < this.end; row++) {
      const at = this.occurred[row]!;
      if (at >= from && at < to && keep(row)) dated.push(row);
    }
    // A wide window (much of the bank) is ranked by the distances' histogram rather than a sort.
    if (dated.length > 16 * want) {
      const pass = this.seen.begin(this.end);
      const marks = this.seen.marks;
      for (const row of dated) marks[row] = pass;
      return nearestRows(distances, this.end, want, (row) => marks[row] === pass);
    }
    dated.sort((a, b) => distances[a]! - distances[b]! || a - b);
    return Int32Array.from(dated.slice(0, Math.max(0, Math.floor(want))));
  }

  /**
   * The `want` of `rows` (as `nearest` or `nearestIn` answered them) whose two-bit codes estimate the highest cosines
   * with the query, best first (ties in the order given); the first `want` as given when the copy has no levels.
   */
  refine(query: Float32Array, rows: Int32Array, want: number): Int32Array {
    const keep = Math.max(0, Math.floor(want));
    if (!this.residuals) return rows.slice(0, keep);
    const scores = this.residuals.scores(query, rows, this.codes.codes, this.codes.bytesPerCode);
    const order = Array.from(rows.keys()).sort((a, b) => scores[b]! - scores[a]! || a - b);
    return Int32Array.from(order.slice(0, keep), (i) => rows[i]!);
  }

  /** Every row's distance to the query; the temporal arm scans with the same query right after the semantic arm. */
  private distances(query: Float32Array): Uint16Array {
    if (this.lastScan?.query !== query) this.lastScan = { query, distances: this.codes.distances(query, this.end) };
    return this.lastScan.distances;
  }

  /**
   * Every row holding any of `select` that passes `keep`, each once, with its length and its counts of each of
   * `score`.
   */
  matching(select: readonly string[], score: readonly string[], keep: (row: number) => boolean): CompactMatches {
    const epoch = this.seen.begin(this.end);
    const { marks, picks } = this.seen;
    const flags = this.flags;
    const rows: number[] = [];
    for (const t of select) {
      this.postingsOf(t)?.each((row) => {
        if (marks[row] === epoch || flags[row] === 0) return true;
        marks[row] = epoch;
        picks[row] = keep(row) ? rows.push(row) - 1 : -1;
        return true;
      });
    }
    const counts = new Uint8Array(rows.length * score.length);
    for (let j = 0; j < score.length; j++) {
      this.postingsOf(score[j]!)?.each((row, count) => {
        if (marks[row] === epoch) {
          const i = picks[row]!;
          if (i >= 0) counts[i * score.length + j] = count;
        }
        return true;
      });
    }
    const lengths = new Uint16Array(rows.length);
    for (let i = 0; i < rows.length; i++) lengths[i] = this.lengths[rows[i]!]!;
    return { rows: Int32Array.from(rows), lengths, counts };
  }

  private postingsOf(term: string): PackedPostings | undefined {
    const n = this.termNumbers.get(term);
    return n === undefined ? undefined : this.postings[n];
  }

  private sharedTags(tags: readonly string[]): readonly string[] {
    const key = tags.join('\u0000');
    let shared = this.tagLists.get(key);
    if (!shared) this.tagLists.set(key, (shared = [...tags]));
    return shared;
  }

  private grow(capacity: number): void {
    const widen = <T extends Uint8Array | Uint16Array | Uint32Array | Float64Array>(
      old: T,
      make: (n: number) => T,
    ): T => {
      const next = make(capacity);
      next.set(old);
      return next;
    };
    this.flags = widen(this.flags, (n) => new Uint8Array(n));
    this.spaces = widen(this.spaces, (n) => new Uint16Array(n));
    this.types = widen(this.types, (n) => new Uint16Array(n));
    this.lengths = widen(this.lengths, (n) => new Uint16Array(n));
    this.occurred = widen(this.occurred, (n) => new Float64Array(n));
    this.blocks = widen(this.blocks, (n) => new Uint32Array(n));
    this.offsets = widen(this.offsets, (n) => new Uint16Array(n));
    this.codes.reserve(capacity);
    this.residuals?.reserve(capacity);
    this.capacity = capacity;
  }
}
