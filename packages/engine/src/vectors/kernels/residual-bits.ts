/**
 * How a vector's components are read at two bits each, around a center: the sign bit (above the center or not, the
 * binary code's bit) and a magnitude bit (further from the center than the dimension's threshold or not). Each of
 * the four cells of a dimension stands for the mean of the sample's components that fell in it, so a code is read back
 * as a point, and a query's dot product with it estimates the cosine far better than the sign bits alone.
 */
export class ResidualLevels {
  private constructor(
    readonly center: Float32Array,
    /** Per dimension: how far from the center a component must lie for its magnitude bit. */
    readonly thresholds: Float32Array,
    /** levels[4j + cell]: cell = sign bit | magnitude bit << 1, as an offset from the center. */
    readonly levels: Float32Array,
  ) {}

  get dimension(): number {
    return this.center.length;
  }

  /**
   * Levels learnt from a sample of a bank's vectors: the center is their mean, a dimension's threshold `sigmas` times
   * its standard deviation, and each cell's level the mean of the sample's components in it (a cell no component fell
   * in stands for its threshold, half of it, or their negatives). Undefined for an empty sample.
   */
  static learn(sample: readonly Float32Array[], sigmas = THRESHOLD_SIGMAS): ResidualLevels | undefined {
    const first = sample[0];
    if (first === undefined) return undefined;
    const d = first.length;
    const n = sample.length;
    const center = new Float32Array(d);
    for (const v of sample) for (let j = 0; j < d; j++) center[j] = center[j]! + v[j]! / n;
    const thresholds = new Float32Array(d);
    for (let j = 0; j < d; j++) {
      let squares = 0;
      for (const v of sample) squares += (v[j]! - center[j]!) ** 2;
      thresholds[j] = sigmas * Math.sqrt(squares / n);
    }
    const sums = new Float64Array(4 * d);
    const counts = new Uint32Array(4 * d);
    for (const v of sample) {
      for (let j = 0; j < d; j++) {
        const offset = v[j]! - center[j]!;
        const cell = 4 * j + cellOf(offset, thresholds[j]!);
        sums[cell] = sums[cell]! + offset;
        counts[cell] = counts[cell]! + 1;
      }
    }
    const levels = new Float32Array(4 * d);
    for (let j = 0; j < d; j++) {
      const t = thresholds[j]!;
      const fallback = [-t / 2, t / 2, -1.5 * t, 1.5 * t];
      for (let cell = 0; cell < 4; cell++) {
        const i = 4 * j + cell;
        levels[i] = counts[i]! > 0 ? sums[i]! / counts[i]! : fallback[cell]!;
      }
    }
    return new ResidualLevels(center, thresholds, levels);
  }
}

/**
 * Where a dimension's threshold lies, in standard deviations of the bank's components: among the thresholds
 * `npm run bench:binary-recall -- --sigmas` compares, where the codes keep most of the exact top k.
 */
export const THRESHOLD_SIGMAS = 1.2;

/** A component's cell: its sign bit, and its magnitude bit above it. */
function cellOf(offset: number, threshold: number): number {
  return Number(offset > 0) | (Number(Math.abs(offset) > threshold) << 1);
}

/** Components per table entry of `scores`: four sign bits and four magnitude bits make one byte. */
const GROUP = 4;

/**
 * The magnitude bits of a bank's vectors (one bit a dimension, row after row), the second bit of each component whose
 * first is the binary code's sign bit (binary-codes.ts). Together they rank a list of candidates by an estimate of
 * their cosine with a query, without the vectors.
 */
export class ResidualBits {
  private bits = new Uint8Array(0);
  private readonly codeBytes: number;
  private scratch = new Float64Array(0);

  constructor(
    readonly levels: ResidualLevels,
    capacity = 0,
  ) {
    this.codeBytes = Math.ceil(levels.dimension / 8);
    this.reserve(capacity);
  }

  get bytes(): number {
    return this.bits.byteLength;
  }

  /** Makes room for `rows` rows, keeping the bits stored. */
  reserve(rows: number): void {
    if (rows * this.codeBytes <= this.bits.length) return;
    const grown = new Uint8Array(rows * this.codeBytes);
    grown.set(this.bits);
    this.bits = grown;
  }

  set(row: number, vector: ArrayLike<number>): void {
    const { center, thresholds } = this.levels;
    const at = row * this.codeBytes;
    if (!(at >= 0 && at + this.codeBytes <= this.bits.length)) {
      throw new RangeError(`row ${row} is outside the ${this.bits.length / this.codeBytes} rows reserved`);
    }
    this.bits.fill(0, at, at + this.codeBytes);
    for (let j = 0; j < center.length; j++) {
      if (Math.abs(vector[j]! - center[j]!) > thresholds[j]!) this.bits[at + (j >> 3)]! |= 1 << (j & 7);
    }
  }

  /**
   * For each of `rows`, the query's dot product with the row's code read back as a point (its offset from the center;
   * the center's own dot product is the same for every row, so it is left out): `signs` holds the rows' sign bits, in
   * the same layout as these bits. One table entry covers four components, so a row costs a lookup per four.
   */
  scores(query: Float32Array, rows: ArrayLike<number>, signs: Uint8Array, signBytes: number): Float64Array {
    const table = this.table(query);
    const groups = Math.ceil(this.levels.dimension / GROUP);
    const out = new Float64Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      const s = row * signBytes;
      const m = row * this.codeBytes;
      let sum = 0;
      for (let g = 0; g < groups; g++) {
        const shift = (g & 1) * 4;
        const signNibble = (signs[s + (g >> 1)]! >> shift) & 15;
        const magnitudeNibble = (this.bits[m + (g >> 1)]! >> shift) & 15;
        sum += table[(g << 8) | signNibble | (magnitudeNibble << 4)]!;
      }
      out[i] = sum;
    }
    return out;
  }

  /**
   * For each group of four components and each of its 256 bit patterns (four sign bits, then four magnitude bits), the
   * query's dot product with the levels the pattern stands for (components past the dimension count 0): each entry is
   * the sum of two pairs' entries, so a group costs 32 products and 256 sums. The table is reused by the next call.
   */
  private table(query: Float32Array): Float64Array {
    const d = this.levels.dimension;
    const levels = this.levels.levels;
    const groups = Math.ceil(d / GROUP);
    if (this.scratch.length < groups * 256) this.scratch = new Float64Array(groups * 256);
    const table = this.scratch;
    const pairs = new Float64Array(32);
    for (let g = 0; g < groups; g++) {
      // pairs[16h + i]: dimensions 4g + 2h and 4g + 2h + 1, i = their sign bits, then their magnitude bits.
      for (let h = 0; h < 2; h++) {
        for (let i = 0; i < 16; i++) {
          let sum = 0;
          for (let t = 0; t < 2; t++) {
            const j = g * GROUP + 2 * h + t;
            if (j >= d) break;
            const cell = ((i >> t) & 1) | (((i >> (t + 2)) & 1) << 1);
            sum += query[j]! * levels[4 * j + cell]!;
          }
          pairs[16 * h + i] = sum;
        }
      }
      const base = g << 8;
      for (let p = 0; p < 256; p++) {
        table[base | p] = pairs[(p & 3) | ((p >> 2) & 12)]! + pairs[16 + (((p >> 2) & 3) | ((p >> 4) & 12))]!;
      }
    }
    return table;
  }
}
