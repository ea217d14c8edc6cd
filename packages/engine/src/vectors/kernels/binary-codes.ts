/**
 * One bit per dimension of each vector (a binary code: 48 bytes for 384 dimensions instead of 772 as int16), compared
 * with the query's code by Hamming distance: the number of bits that differ. A bit is set when the component is above
 * the center's (zeros by default; the bank's mean spreads the bits of vectors that all lean the same way). Hamming
 * distance ranks roughly as the angle does, so it picks candidates cheaply; the exact vectors then rank those.
 *
 * The scan is a tiny hand-written WebAssembly module; its source (WAT) is below, assembled with wabt's wat2wasm
 * (`npx -p wabt wat2wasm hamming.wat`, wabt 1.0.39) and embedded as base64, so there is nothing to build or download.
 *
 * (module
 *   (memory (export "memory") 1)
 *   (func (export "hamming") (param $q i32) (param $data i32) (param $rows i32) (param $bytes i32) (param $out i32)
 *     ;; out[r] (u16) = popcount(q XOR data[r]) for r < rows; codes $bytes long, a multiple of 16 and at most 496
 *     ;; (each byte lane adds one popcount of at most 8 per 16 bytes: 31 of them stay below 256); byte offsets.
 *     ;; Four rows at a time share each load of the query and one reduction of their byte counts to four sums
 *     ;; (pairwise widenings, then two rounds of shuffles and adds); the last rows one at a time.
 *     (local $end i32) (local $end4 i32) (local $j i32) (local $p1 i32) (local $p2 i32) (local $p3 i32)
 *     (local $qv v128) (local $a v128) (local $b v128) (local $c v128) (local $d v128)
 *     (local.set $end (i32.add (local.get $out) (i32.shl (local.get $rows) (i32.const 1))))
 *     (local.set $end4 (i32.add (local.get $out) (i32.shl (i32.and (local.get $rows) (i32.const -4)) (i32.const 1))))
 *     (block $done4 (loop $quad
 *       (br_if $done4 (i32.ge_u (local.get $out) (local.get $end4)))
 *       (local.set $p1 (i32.add (local.get $data) (local.get $bytes)))
 *       (local.set $p2 (i32.add (local.get $p1) (local.get $bytes)))
 *       (local.set $p3 (i32.add (local.get $p2) (local.get $bytes)))
 *       (local.set $a (v128.const i32x4 0 0 0 0))
 *       (local.set $b (v128.const i32x4 0 0 0 0))
 *       (local.set $c (v128.const i32x4 0 0 0 0))
 *       (local.set $d (v128.const i32x4 0 0 0 0))
 *       (local.set $j (i32.const 0))
 *       (loop $chunk
 *         (local.set $qv (v128.load (i32.add (local.get $q) (local.get $j))))
 *         (local.set $a (i8x16.add (local.get $a)
 *           (i8x16.popcnt (v128.xor (v128.load (i32.add (local.get $data) (local.get $j))) (local.get $qv)))))
 *         (local.set $b (i8x16.add (local.get $b)
 *           (i8x16.popcnt (v128.xor (v128.load (i32.add (local.get $p1) (local.get $j))) (local.get $qv)))))
 *         (local.set $c (i8x16.add (local.get $c)
 *           (i8x16.popcnt (v128.xor (v128.load (i32.add (local.get $p2) (local.get $j))) (local.get $qv)))))
 *         (local.set $d (i8x16.add (local.get $d)
 *           (i8x16.popcnt (v128.xor (v128.load (i32.add (local.get $p3) (local.get $j))) (local.get $qv)))))
 *         (local.set $j (i32.add (local.get $j) (i32.const 16)))
 *         (br_if $chunk (i32.lt_u (local.get $j) (local.get $bytes))))
 *       (local.set $a (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $a))))
 *       (local.set $b (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $b))))
 *       (local.set $c (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $c))))
 *       (local.set $d (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $d))))
 *       ;; [a0+a1, a2+a3, b0+b1, b2+b3] and the same for c, d; then [a, b, c, d], narrowed to u16 and stored
 *       (local.set $a (i32x4.add
 *         (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $a) (local.get $b))
 *         (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $a) (local.get $b))))
 *       (local.set $c (i32x4.add
 *         (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $c) (local.get $d))
 *         (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $c) (local.get $d))))
 *       (local.set $a (i32x4.add
 *         (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $a) (local.get $c))
 *         (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $a) (local.get $c))))
 *       (v128.store64_lane 0 (local.get $out) (i16x8.narrow_i32x4_u (local.get $a) (local.get $a)))
 *       (local.set $data (i32.add (local.get $p3) (local.get $bytes)))
 *       (local.set $out (i32.add (local.get $out) (i32.const 8)))
 *       (br $quad)))
 *     (block $done (loop $single
 *       (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
 *       (local.set $a (v128.const i32x4 0 0 0 0))
 *       (local.set $j (i32.const 0))
 *       (loop $chunk1
 *         (local.set $a (i8x16.add (local.get $a)
 *           (i8x16.popcnt (v128.xor
 *             (v128.load (i32.add (local.get $data) (local.get $j)))
 *             (v128.load (i32.add (local.get $q) (local.get $j)))))))
 *         (local.set $j (i32.add (local.get $j) (i32.const 16)))
 *         (br_if $chunk1 (i32.lt_u (local.get $j) (local.get $bytes))))
 *       (local.set $a (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $a))))
 *       (local.set $a (i32x4.add (local.get $a)
 *         (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $a) (local.get $a))))
 *       (i32.store16 (local.get $out)
 *         (i32.add (i32x4.extract_lane 0 (local.get $a)) (i32x4.extract_lane 1 (local.get $a))))
 *       (local.set $data (i32.add (local.get $data) (local.get $bytes)))
 *       (local.set $out (i32.add (local.get $out) (i32.const 2)))
 *       (br $single)))))
 */
const HAMMING_WASM =
  'AGFzbQEAAAABCQFgBX9/f39/AAMCAQAFAwEAAQcUAgZtZW1vcnkCAAdoYW1taW5nAAAK7gQB6wQCBn8FeyAEIAJBAXRqIQUgBCACQXxxQQF0ai' +
  'EGAkADQCAEIAZPDQEgASADaiEIIAggA2ohCSAJIANqIQr9DAAAAAAAAAAAAAAAAAAAAAAhDP0MAAAAAAAAAAAAAAAAAAAAACEN/QwAAAAAAAAA' +
  'AAAAAAAAAAAAIQ79DAAAAAAAAAAAAAAAAAAAAAAhD0EAIQcDQCAAIAdq/QAEACELIAwgASAHav0ABAAgC/1R/WL9biEMIA0gCCAHav0ABAAgC/' +
  '1R/WL9biENIA4gCSAHav0ABAAgC/1R/WL9biEOIA8gCiAHav0ABAAgC/1R/WL9biEPIAdBEGohByAHIANJDQALIAz9ff1/IQwgDf19/X8hDSAO' +
  '/X39fyEOIA/9ff1/IQ8gDCAN/Q0AAQIDCAkKCxAREhMYGRobIAwgDf0NBAUGBwwNDg8UFRYXHB0eH/2uASEMIA4gD/0NAAECAwgJCgsQERITGB' +
  'kaGyAOIA/9DQQFBgcMDQ4PFBUWFxwdHh/9rgEhDiAMIA79DQABAgMICQoLEBESExgZGhsgDCAO/Q0EBQYHDA0ODxQVFhccHR4f/a4BIQwgBCAM' +
  'IAz9hgH9WwMAACAKIANqIQEgBEEIaiEEDAALCwJAA0AgBCAFTw0B/QwAAAAAAAAAAAAAAAAAAAAAIQxBACEHA0AgDCABIAdq/QAEACAAIAdq/Q' +
  'AEAP1R/WL9biEMIAdBEGohByAHIANJDQALIAz9ff1/IQwgDCAMIAz9DQgJCgsMDQ4PAAECAwQFBgf9rgEhDCAEIAz9GwAgDP0bAWo7AQAgASAD' +
  'aiEBIARBAmohBAwACwsL';

/** Widest code the kernel sums without a byte lane overflowing: 31 blocks of 128 dimensions. */
const MAX_SIMD_DIMENSION = 31 * 128;
/** Distances are stored as u16. */
const MAX_DIMENSION = 65535;
const PAGE = 65536;

let compiled: WebAssembly.Module | null | undefined;

function module(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(Buffer.from(HAMMING_WASM, 'base64'));
    } catch {
      compiled = null; // no SIMD support: the codes live in plain arrays and are compared in JS
    }
  }
  return compiled;
}

export interface BinaryCodesOptions {
  /** false: the JS path even where the WebAssembly one would run (the two give the same distances). */
  simd?: boolean;
}

/** Where the codes live and how they are compared: one byte array per role, and the scan. */
interface CodeStore {
  readonly capacity: number;
  /** Every row's code, `codeBytes` apart; replaced when the store grows. */
  readonly codes: Uint8Array;
  /** Where the query's code goes before a scan. */
  readonly query: Uint8Array;
  readonly bytes: number;
  reserve(rows: number): void;
  scan(rows: number): Uint16Array;
}

/**
 * The codes in the module's own memory. Layout: [query | rows ... | distances (u16)]; the distances area moves when
 * the store grows (rows never move).
 */
class WasmCodeStore implements CodeStore {
  private readonly memory: WebAssembly.Memory;
  private readonly hamming: (q: number, data: number, rows: number, bytes: number, out: number) => void;
  capacity = 0;
  codes = new Uint8Array(0);
  query: Uint8Array;

  constructor(
    instance: WebAssembly.Instance,
    private readonly codeBytes: number,
  ) {
    const exports = instance.exports as { memory: WebAssembly.Memory; hamming: WasmCodeStore['hamming'] };
    this.memory = exports.memory;
    this.hamming = exports.hamming;
    this.query = new Uint8Array(this.memory.buffer, 0, codeBytes);
  }

  get bytes(): number {
    return this.memory.buffer.byteLength;
  }

  reserve(rows: number): void {
    const needed = this.distancesOffset(rows) + rows * 2;
    const have = this.memory.buffer.byteLength;
    if (needed > have) this.memory.grow(Math.ceil((needed - have) / PAGE));
    this.capacity = rows;
    this.codes = new Uint8Array(this.memory.buffer, this.codeBytes, rows * this.codeBytes);
    this.query = new Uint8Array(this.memory.buffer, 0, this.codeBytes);
  }

  scan(rows: number): Uint16Array {
    const out = this.distancesOffset(this.capacity);
    this.hamming(0, this.codeBytes, rows, this.codeBytes, out);
    return new Uint16Array(this.memory.buffer, out, rows);
  }

  private distancesOffset(capacity: number): number {
    return this.codeBytes * (1 + capacity);
  }
}

/** The codes in plain arrays, compared 32 bits at a time (codes are padded to whole 32-bit words). */
class JsCodeStore implements CodeStore {
  capacity = 0;
  codes = new Uint8Array(0);
  readonly query: Uint8Array;
  private words = new Int32Array(0);
  private readonly queryWords: Int32Array;
  private distances = new Uint16Array(0);

  constructor(private readonly codeBytes: number) {
    this.queryWords = new Int32Array(codeBytes / 4);
    this.query = new Uint8Array(this.queryWords.buffer);
  }

  get bytes(): number {
    return this.codes.byteLength + this.distances.byteLength + this.query.byteLength;
  }

  reserve(rows: number): void {
    const codes = new Uint8Array(rows * this.codeBytes);
    codes.set(this.codes);
    this.codes = codes;
    this.words = new Int32Array(codes.buffer);
    this.distances = new Uint16Array(rows);
    this.capacity = rows;
  }

  scan(rows: number): Uint16Array {
    const q = this.queryWords;
    const words = this.words;
    const n = q.length;
    for (let r = 0, p = 0; r < rows; r++) {
      let d = 0;
      for (let j = 0; j < n; j++, p++) d += popcount32(words[p]! ^ q[j]!);
      this.distances[r] = d;
    }
    return this.distances.subarray(0, rows);
  }
}

/** Set bits of a 32-bit integer (the classic SWAR count: pairs, nibbles, then bytes summed by one multiply). */
function popcount32(x: number): number {
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** A growable store of binary codes, scanned by Hamming distance to a query. */
export class BinaryCodes {
  private readonly center: Float32Array;
  private readonly codeBytes: number;

  private constructor(
    private readonly store: CodeStore,
    readonly dimension: number,
    capacity: number,
    center: Float32Array,
  ) {
    this.center = center;
    this.codeBytes = store.query.byteLength;
    this.reserve(capacity);
  }

  /**
   * Codes of `dimension`-wide vectors, bits taken as sign(vector - center) (center: zeros when not given). A dimension
   * that is a multiple of 128 (up to 3,968) is scanned in WebAssembly SIMD where available; any other in JS.
   */
  static create(
    dimension: number,
    capacity: number,
    center?: Float32Array,
    options: BinaryCodesOptions = {},
  ): BinaryCodes {
    if (!Number.isInteger(dimension) || dimension < 1 || dimension > MAX_DIMENSION) {
      throw new RangeError(`binary codes need a whole dimension from 1 to ${MAX_DIMENSION}, not ${dimension}`);
    }
    if (center !== undefined && center.length !== dimension) {
      throw new RangeError(`the center has ${center.length} components; the codes' dimension is ${dimension}`);
    }
    const kept = center ? Float32Array.from(center) : new Float32Array(dimension);
    const wasm = options.simd !== false && dimension % 128 === 0 && dimension <= MAX_SIMD_DIMENSION ? module() : null;
    const store = wasm
      ? new WasmCodeStore(new WebAssembly.Instance(wasm), dimension / 8)
      : new JsCodeStore(Math.ceil(dimension / 32) * 4);
    return new BinaryCodes(store, dimension, capacity, kept);
  }

  /** Whether the scan runs in WebAssembly SIMD (otherwise in JS). */
  get simd(): boolean {
    return this.store instanceof WasmCodeStore;
  }

  get rowCapacity(): number {
    return this.store.capacity;
  }

  /** Makes room for `rows` rows, keeping the codes stored. */
  reserve(rows: number): void {
    if (rows > this.store.capacity) this.store.reserve(rows);
  }

  /** The stored codes, row after row, `bytesPerCode` bytes each: a view valid until the next `reserve`. */
  get codes(): Uint8Array {
    return this.store.codes;
  }

  get bytesPerCode(): number {
    return this.codeBytes;
  }

  /** Stores the code of `vector` as row `row` (below rowCapacity). */
  set(row: number, vector: ArrayLike<number>): void {
    if (!(row >= 0 && row < this.store.capacity)) {
      throw new RangeError(`row ${row} is outside the ${this.store.capacity} rows reserved`);
    }
    this.encode(vector, this.store.codes, row * this.codeBytes);
  }

  /** Hamming distance of each of the first `rows` codes to the query's code: a view valid until the next call. */
  distances(query: Float32Array, rows: number): Uint16Array {
    if (!(rows >= 0 && rows <= this.store.capacity)) {
      throw new RangeError(`${rows} rows asked for; ${this.store.capacity} are reserved`);
    }
    this.encode(query, this.store.query, 0);
    return this.store.scan(rows);
  }

  /**
   * For each of `rows`, the query's dot product with that row's code read as +1 or -1 per dimension (above or below
   * the center): the query's own components weigh each bit, so it ranks finer than the Hamming distance, which
   * counts every differing bit alike. Costs one table lookup per code byte, so it is for a candidate list, not a bank.
   */
  signedDots(query: Float32Array, rows: ArrayLike<number>): Float64Array {
    const table = this.byteTable(query);
    const codes = this.store.codes;
    const n = this.codeBytes;
    const out = new Float64Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const p = rows[i]! * n;
      let sum = 0;
      for (let b = 0; b < n; b++) sum += table[(b << 8) | codes[p + b]!]!;
      out[i] = sum;
    }
    return out;
  }

  /** Bytes held (for the cache's accounting). */
  get bytes(): number {
    return this.store.bytes + this.center.byteLength;
  }

  /**
   * For each code byte and each of its 256 values, the sum of the query's components over that byte's 8 dimensions,
   * each added when its bit is set and subtracted when not (dimensions past the last count 0). Each value's entry is
   * the entry without its lowest set bit, plus twice that bit's component.
   */
  private byteTable(query: Float32Array): Float64Array {
    const d = this.dimension;
    const table = new Float64Array(this.codeBytes * 256);
    for (let b = 0; b < this.codeBytes; b++) {
      const base = b << 8;
      let none = 0;
      for (let j = b * 8; j < Math.min(b * 8 + 8, d); j++) none -= query[j]!;
      table[base] = none;
      for (let v = 1; v < 256; v++) {
        const lowest = v & -v;
        const j = b * 8 + 31 - Math.clz32(lowest);
        table[base | v] = table[base | (v ^ lowest)]! + (j < d ? 2 * query[j]! : 0);
      }
    }
    return table;
  }

  /**
   * Writes the code of `vector` into `into[offset ..]`: bit j of byte b is dimension 8b + j; the padding stays 0. A
   * whole byte's eight comparisons are written out, since loading a bank encodes every one of its vectors.
   */
  private encode(vector: ArrayLike<number>, into: Uint8Array, offset: number): void {
    const d = this.dimension;
    const c = this.center;
    const whole = d >> 3;
    for (let b = 0, j = 0; b < whole; b++, j += 8) {
      into[offset + b] =
        Number(vector[j]! > c[j]!) |
        (Number(vector[j + 1]! > c[j + 1]!) << 1) |
        (Number(vector[j + 2]! > c[j + 2]!) << 2) |
        (Number(vector[j + 3]! > c[j + 3]!) << 3) |
        (Number(vector[j + 4]! > c[j + 4]!) << 4) |
        (Number(vector[j + 5]! > c[j + 5]!) << 5) |
        (Number(vector[j + 6]! > c[j + 6]!) << 6) |
        (Number(vector[j + 7]! > c[j + 7]!) << 7);
    }
    for (let b = whole; b < this.codeBytes; b++) {
      let byte = 0;
      for (let j = b * 8; j < Math.min(b * 8 + 8, d); j++) byte |= Number(vector[j]! > c[j]!) << (j & 7);
      into[offset + b] = byte;
    }
  }
}

/** Counts of each distance, reused by every call; each clears the bins it used (up to its farthest) before it ends. */
const histogram = new Uint32Array(MAX_DIMENSION + 1);

/** Rows of which every STRIDE-th is looked at to find how far the nearest lie (exactly below SAMPLED_FROM rows). */
const STRIDE = 8;
const SAMPLED_FROM = 65_536;

/**
 * The `want` rows with the smallest distances among the first `rows` that pass `keep`, nearest first (ties by row).
 * No sort of every row: a histogram of every eighth distance (of all, in a small bank) gives the distance within which
 * about three times `want` rows lie; one pass takes the rows within it that `keep` passes, and a counting sort by
 * distance orders them. When fewer than `want` of them pass (a narrow filter), every row is asked instead.
 */
export function nearestRows(
  distances: Uint16Array,
  rows: number,
  want: number,
  keep: (row: number) => boolean,
): Int32Array {
  if (!(rows >= 0 && rows <= distances.length)) {
    throw new RangeError(`${rows} rows asked for; ${distances.length} distances given`);
  }
  const limit = Math.floor(want);
  if (!(limit >= 1)) return new Int32Array(0);
  const within = nearWithin(distances, rows, 3 * limit);
  let candidates: number[] = [];
  for (let r = 0; r < rows; r++) if (distances[r]! <= within && keep(r)) candidates.push(r);
  if (candidates.length < limit) {
    candidates = [];
    for (let r = 0; r < rows; r++) if (keep(r)) candidates.push(r);
  }
  return byDistance(distances, candidates, limit);
}

/** The distance within which about `count` of the first `rows` lie (every one of them when fewer). */
function nearWithin(distances: Uint16Array, rows: number, count: number): number {
  const stride = rows < SAMPLED_FROM ? 1 : STRIDE;
  const target = Math.ceil(count / stride);
  let farthest = 0;
  for (let r = 0; r < rows; r += stride) {
    const d = distances[r]!;
    histogram[d]!++;
    if (d > farthest) farthest = d;
  }
  let within = MAX_DIMENSION;
  for (let d = 0, total = 0; d <= farthest; d++) {
    total += histogram[d]!;
    if (total >= target) {
      within = d;
      break;
    }
  }
  histogram.fill(0, 0, farthest + 1);
  return within;
}

/** The first `limit` of `candidates` (rows in increasing order) by distance, ties by row: a counting sort. */
function byDistance(distances: Uint16Array, candidates: readonly number[], limit: number): Int32Array {
  let farthest = 0;
  for (const r of candidates) {
    const d = distances[r]!;
    histogram[d]!++;
    if (d > farthest) farthest = d;
  }
  let total = 0;
  for (let d = 0; d <= farthest; d++) {
    const count = histogram[d]!;
    histogram[d] = total;
    total += count;
  }
  const ordered = new Int32Array(candidates.length);
  for (const r of candidates) ordered[histogram[distances[r]!]!++] = r;
  histogram.fill(0, 0, farthest + 1);
  return ordered.slice(0, limit);
}
